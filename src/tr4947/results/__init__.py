"""Turning recorded runs into what the site shows: AsciiDoc partials and charts."""
