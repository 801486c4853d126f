"""What a run tells its reader: reports, failure sentences, policy, release.

The JSON / JUnit / terminal reports and transcripts (``writers``), the HTML
report (``html_report``), one sentence per failure (``explain``), the
known-failures policy (``known_failures``), the matrix digest and ``--diff``
(``release``). They import the kit and the registry, never the judges.
"""
