print("fake upstream: not yet")
