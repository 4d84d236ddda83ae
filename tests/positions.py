"""Scripted positions shared by several test modules (imported as `positions`: pytest puts this
folder on the path)."""

# Checkers, o to move with two captures to choose from: c3e5 (over d4) and a3c5 (over b4).
CHECKERS_CHOICE = """
8 . . . . . . . x
7 . . . . . . . .
6 . . . . . x . .
5 . . . . . . . .
4 . x . x . . . .
3 o . o . . . . .
2 . . . . . . . .
1 . . . . . . . .
"""
