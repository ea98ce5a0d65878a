"""Sphinx configuration of dualad's documentation.

Build (offline, warnings are errors): ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
Pages are MyST Markdown; pages whose front matter says ``file_format: mystnb`` are
notebooks in text form whose ``{code-cell}`` blocks run on every build (myst-nb),
so no example can rot. Docstring examples run under pytest's doctest.
"""

import sphinxcontrib.katex

import dualad

project = "dualad"
author = "dualad developers"
copyright = "2026, dualad developers"
version = release = dualad.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinxcontrib.katex",
    "sphinx.ext.viewcode",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "jupyter_execute"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}

# autodoc: NumPy-style docstrings through napoleon; the reference lists every public name.
autosummary_generate = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# Offline: no inventory is fetched unless a local copy is configured.
intersphinx_mapping = {}

# myst / myst-nb: every code cell runs on every build; an error fails the build.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 600
nb_merge_streams = True
nb_render_markdown_format = "myst"  # Markdown outputs (tables with math) rendered as MyST

# Math is rendered at build time (KaTeX, run by node) into MathML, which browsers draw with
# their own fonts: a page loads no script, stylesheet or font from a CDN and reads the same
# offline. KaTeX's stylesheet (a CDN link by default) serves only its HTML output, so the
# extension's own layout rules, copied into _static, take its place.
katex_prerender = True
katex_css_path = "katex-math.css"
# When prerendering, the extension passes its defaults to KaTeX, not katex_options
# (hagenw/sphinxcontrib-katex#145). TeX that KaTeX cannot parse fails the build.
sphinxcontrib.katex.KATEX_DEFAULT_OPTIONS.update(output="mathml", throwOnError=True)

html_theme = "furo"
html_title = f"dualad {release}"
html_static_path = ["_static"]
html_css_files = ["dualad.css"]  # wide tables and equations scroll inside the page
