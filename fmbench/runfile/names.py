"""A device's name as one text, shown as it is: NFC, invisible characters made visible, look-alikes named.

A device name (``environment.deviceName``) and a hardware model are free text an
operator types, and they name the pages a device's runs are grouped on. Three
things let two names that differ read the same:

- **Normal forms.** "é" can be one code point (NFC) or "e" and a combining
  accent (NFD); the two are the same text. The reader keeps names in NFC
  (:func:`normalized`), so they name one device.
- **Invisible and bidirectional characters** (a zero-width space, a
  right-to-left override, a no-break space where a space was). Wherever a name
  is shown (pages, the terminal, the database's ``runs.device_name`` and
  ``runs.hardware_model``, which hold the name as shown) each is written as
  ``<U+200B>`` (:func:`visible`): the names differ where a reader sees them.
- **Look-alikes from another script** ("MacBook Рro" with a Cyrillic Р). Such a
  name is flagged (:func:`name_findings`) when its letters mix scripts outside
  what Unicode's UTS #39 "highly restrictive" level allows (one script, or Latin
  with Han and Japanese kana, Bopomofo or Hangul) and a letter of a minority
  script looks like one of the name's main script; and when every letter of a
  name in one script other than Latin looks like a Latin one ("МасВоок").
  Scripts and look-alikes come from Unicode's data as the
  ``confusable_homoglyphs`` package ships it.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from fmbench.errors import Problem
from fmbench.runfile.models import Environment

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"})
"""Controls, format characters (zero-width ones, bidi controls, the BOM, tags), private use, unassigned code
points, surrogates, line and paragraph separators, and every space but U+0020 (checked apart)."""
_HIDDEN_MARKS = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0,
     *range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)
"""Characters of other categories that draw nothing: the combining grapheme joiner, Hangul fillers, Khmer's
inherent vowels, the blank Braille pattern, Mongolian and the other variation selectors."""
_TOKEN = re.compile(r"<U\+([0-9A-F]{4,6})>")
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
"""UTS #39's "highly restrictive" level: the mixes of scripts a name may use (any subset of one of these)."""
_NOT_A_SCRIPT = frozenset({"COMMON", "INHERITED", "Unknown"})


def normalized(text: str) -> str:
    """``text`` in Unicode's composed normal form (NFC)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def normalize_names(environment: Environment) -> tuple[Environment, list[Problem]]:
    """The run's environment with its device name and hardware model in NFC, and a note on each that was not."""
    changed: dict[str, str] = {}
    for key in ("deviceName", "hardwareModel"):
        value = getattr(environment, key)
        if value is not None and normalized(value) != value:
            changed[key] = normalized(value)
    if not changed:
        return environment, []
    notes = [
        Problem(f"environment.{key}", f"not in composed form (NFC); read as “{visible(value)}”, the same text composed, "
                "so it names one device with the name written composed")
        for key, value in changed.items()
    ]
    return environment.model_copy(update=changed), notes


def hidden(char: str) -> bool:
    """Whether ``char`` draws nothing, or changes how the text around it reads, instead of showing."""
    if char == " ":
        return False
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or ord(char) in _HIDDEN_MARKS


def visible(text: str) -> str:
    """``text`` with each hidden character written as ``<U+XXXX>`` (its code point), the rest as it is."""
    if text.isascii() and text.isprintable():
        return text  # nearly every name
    return "".join(f"<U+{ord(c):04X}>" if hidden(c) else c for c in text)


def from_visible(shown: str) -> str:
    """The name :func:`visible` showed as ``shown`` (a name that holds ``<U+XXXX>`` as typed reads back as the
    character: the two show alike, so they are flagged alike)."""
    return _TOKEN.sub(lambda m: chr(int(m.group(1), 16)) if int(m.group(1), 16) <= 0x10FFFF else m.group(), shown)


def _described(chars: Iterable[str]) -> str:
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in dict.fromkeys(chars))


def _title(script: str) -> str:
    return script.replace("_", " ").title()


def name_findings(name: str) -> list[str]:
    """What makes ``name`` (as read: NFC, its hidden characters unescaped) read like another name, one sentence
    each, the name shown as :func:`visible` shows it; empty for a plain name."""
    shown = visible(name)
    out = []
    invisible = [c for c in name if hidden(c)]
    if invisible:
        some = "an invisible or bidirectional character" if len(set(invisible)) == 1 else "invisible or bidirectional characters"
        out.append(
            f"the name “{shown}” holds {some} ({_described(invisible)}), shown as <U+…>: unseen, it would read as "
            "the same name without them, which is another device"
        )
    if not name.isascii():
        look_alike = _look_alike(name)
        if look_alike:
            out.append(f"the name “{shown}” {look_alike}")
    return out


def device_name_notes(environment: Environment) -> list[Problem]:
    """What makes the run's device name or hardware model read like another (:func:`name_findings`), as notes."""
    return [
        Problem(f"environment.{key}", finding)
        for key in ("deviceName", "hardwareModel")
        for value in (getattr(environment, key),)
        if value
        for finding in name_findings(value)
    ]


def _look_alike(name: str) -> str | None:
    # 0.2 s to load Unicode's script and look-alike tables: only a name that is not ASCII needs them
    from confusable_homoglyphs import categories, confusables

    letters = [c for c in name if c.isalpha()]
    scripts = Counter(categories.alias(c) for c in letters)
    for script in _NOT_A_SCRIPT:
        scripts.pop(script, None)
    if not scripts:
        return None
    main = scripts.most_common(1)[0][0]
    if len(scripts) > 1:
        if any(set(scripts) <= allowed for allowed in _ALLOWED_MIXES):
            return None
        found = confusables.is_confusable(name, greedy=True, preferred_aliases=[main.lower()]) or []
        posing = [f for f in found if f["alias"] != main and f["character"].isalpha()]
        if not posing:
            return None
        first = posing[0]
        like = next((h["c"] for h in first["homoglyphs"] if any(categories.alias(c) == main for c in h["c"])),
                    first["homoglyphs"][0]["c"])
        mixed = " and ".join(_title(s) for s in sorted(scripts, key=lambda s: (s != main, s)))
        return (
            f"mixes {mixed} letters, and “{first['character']}” ({_title(first['alias'])}) looks like "
            f"{_title(main)} “{like}”: it may pass for another device's name"
        )
    if main == "LATIN":
        return None
    found = confusables.is_confusable(name, greedy=True, preferred_aliases=["latin"]) or []
    alike = {f["character"] for f in found}
    if set(letters) <= alike:
        return f"is written in {_title(main)} letters that each look like a Latin one: it may pass for a Latin name"
    return None
