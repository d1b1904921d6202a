"""The papers `aqmlab reproduce` knows, each a module of this package."""

#: Paper name -> module. Papers not yet plugged in are refused with the list of those that are.
PAPERS = {
    "apace": "aqmlab.reproduce.apace",
    "dropfn": "aqmlab.reproduce.dropfn",
    "laq": "aqmlab.reproduce.laq",
    "lindrop": "aqmlab.reproduce.lindrop",
    "modred": "aqmlab.reproduce.modred",
}
