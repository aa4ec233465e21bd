from tclint.rules import model
from tclint.rules.model import Severity
from tclint.rules.rule import Family, Rule


class UnparsableFile(Rule):
    """
    ## What it does
    Reports a file that Python cannot parse, at the position of the syntax error.

    ## Why is this bad?
    tclint analyses code with the grammar of the interpreter it runs on (the one that will run the
    code); a file it cannot parse cannot be checked for torch.compile hazards, and other files that
    import from it lose the regions it defines.  The run continues with the other files.

    ## Example
    ```python
    def forward(self, x)
        return x
    ```

    ## Use instead
    Fix the syntax error.  If the file uses syntax newer than the interpreter running tclint, run
    tclint from the project's own environment.

    ## Fix safety
    No fix.

    ## References
    - https://docs.python.org/3/reference/grammar.html
    """

    code = model.PARSE_ERROR
    name = "syntax-error"
    summary = "The file cannot be parsed"
    family = Family.TCLINT
    region_only = False
    default_severity = Severity.ERROR
