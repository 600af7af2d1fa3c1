"""The meta-learned parameterisation (paper 003): a graph network predicts lambda for unseen models.
"""
