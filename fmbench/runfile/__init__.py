"""Reading run files: the portable JSON of either format generation, its bounds, its models and its vocabulary.

The lowest layer. Nothing here knows about the database, comparisons or pages.
"""
