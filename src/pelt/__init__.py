"""pelt: pluggable entity lookup tables."""
