"""Readers of the SentEval files and training corpora -> plain records."""
