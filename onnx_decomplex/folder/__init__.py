"""Folder mode: `zoo` converts every model of a folder and records each; `baseline` reads
an earlier report and finds the regressions; `merge` joins the reports of shards;
`junit` writes JUnit XML for CI."""
