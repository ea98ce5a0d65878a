"""scipy.signal called unchanged."""
