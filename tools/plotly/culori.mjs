// The colour functions plotly.js takes from culori, with the colour spaces the site's charts use (sRGB:
// hex, rgb(), rgba(), named colours; hsl(); linear RGB for contrast), instead of culori's whole bundle of
// every colour space. A colour in another space (lab(), oklch(), ...) reads as black, with Plotly's warning.
import { converter, formatHex, formatRgb, modeHsl, modeLrgb, modeRgb, useMode, wcagContrast, wcagLuminance } from 'culori/fn';

useMode(modeRgb);
useMode(modeHsl);
useMode(modeLrgb);

export { converter, formatHex, formatRgb, wcagContrast, wcagLuminance };
