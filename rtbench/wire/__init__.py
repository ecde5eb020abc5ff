"""Formats shared with other programs, pure: compact integer columns and histograms."""
