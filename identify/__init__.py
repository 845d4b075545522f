"""Identification: captures, preprocessing, estimators (EWLS) and fitting pipelines that return models."""
