"""Presentation: reports, comparisons and the catalogue as text and markdown (render, render_diff), the
panel's timeline (timeline) and the Chrome trace export (export). Nothing here computes a diagnosis."""
