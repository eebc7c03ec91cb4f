"""``fmbench serve``: the same views and templates as the static build, live from the database."""
