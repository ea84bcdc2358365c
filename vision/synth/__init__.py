"""Card face renderers and the scene synthesiser: training and test data. The device never imports this."""
