"""Loaded by schemathesis in the fuzz drill (SCHEMATHESIS_HOOKS, see hostile_fuzz.py).

CPython before 3.11.8 cannot run ast.parse on two threads at once
(python/cpython#106905: "AST constructor recursion depth mismatch"). Hypothesis
parses the source of lambdas to describe strategies, so with several workers an
operation now and then ended in that error and was left partly untested. The
drill needs no such descriptions: there, hypothesis gets the short form it uses
whenever it cannot find a lambda's source.
"""

import sys

if sys.version_info < (3, 11, 8):
    from hypothesis.internal import lambda_sources

    lambda_sources._lambda_description = lambda f, *args, **kwargs: "lambda: <unknown>"
