"""Not a package: the root of a genebench clone.

Python started in the folder that holds a clone named `genebench/` imports the clone itself as `genebench`, ahead
of the installed package (an editable install is found after it). This file turns that into one clear line; under
any other name (pytest imports it as the root of its collection) it does nothing.
"""

from pathlib import Path

if __name__ == "genebench":
    raise ImportError(
        f"`import genebench` found the clone folder '{Path(__file__).parent}', not the package inside it: run Python "
        f"from the clone's root or any folder other than '{Path(__file__).parent.parent}'."
    )
