"""Measuring the reading: held-out renders, foreign-looking decks, the real material. The device never imports this."""
