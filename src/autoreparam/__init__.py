"""autoreparam: automatic reparameterisation of NumPyro models.

Importing this package touches neither the file system nor the network.
"""

__version__ = "0.1.0"
