from tclint.rules import model
from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file that could not be read as Python source: not valid UTF-8 (or its declared
    encoding), a binary file, a notebook that is not valid JSON, a file larger than
    `max-file-size`, or one nested too deeply to analyse.  Also a file the walk found but may not
    read (permission denied), a folder it found but may not list, and a path that is not a regular
    file (a named pipe or device swapped in after discovery): tclint reads regular files only.

    ## Why is this bad?
    Nothing in the file is checked.  tclint says so once, instead of failing the whole run or
    silently skipping the file.

    ## Example
    A `model.py` saved as Latin-1 with a `é` in a comment and no coding cookie.

    ## Use instead
    Save the file as UTF-8 (or declare its encoding with a PEP 263 coding comment), exclude
    generated or binary files with `extend-exclude`, or raise `max-file-size`.

    ## Fix safety
    No fix.

    ## References
    - https://peps.python.org/pep-0263/
    """

    code = model.UNREADABLE_FILE
    name = "unreadable-file"
    summary = "The file cannot be read as Python source"
    family = Family.TCLINT
    region_only = False
    default_severity = Severity.ERROR
