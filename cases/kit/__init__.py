"""The kit: what a case imports, and the ground every other wing stands on.

The case API (``api``: case, fc_assert, fail, warn, skip, need, owner, show,
listing), requests and their replies read through the models (``replies``),
expectations from the fixture's bytes and from git (``facts``, ``gitfacts``,
``commitfacts``, ``patchfacts``, ``commit_ids``; their answers kept on the
copy's view by ``memo``), strict formats (``formats``),
FC-052's instruments (``netwatch``, ``loopback_proxy``), and what the run is
told and how it ends (``settings``, ``invocation``, ``exits``). It imports
wire/, fixture/ and cases/registry.py only, never a wing above it.
"""
