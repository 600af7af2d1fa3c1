"""Tests of autoreparam.models: the model zoo and its data loaders."""
