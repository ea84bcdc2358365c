"""Training the card classifiers and the look network, and their datasets. The device never imports this."""
