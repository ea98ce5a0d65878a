"""numpy.linalg's array-API names and tensor solves."""
