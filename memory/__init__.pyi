# Written by `python -m lamina.core.stubs` from the mapping in __init__.py: edit that, then run it.

from .facade import Memory as Memory
from .given import AddFactsResult as AddFactsResult
from .given import FactInput as FactInput
from .opening import open_store as open_store
from .portable import ImportResult as ImportResult
from .results import AddResult as AddResult
from .results import AnswerResult as AnswerResult
from .results import ForgetResult as ForgetResult
from .results import MemoryHit as MemoryHit
from .results import TokenUsage as TokenUsage
from .revision import UpdateResult as UpdateResult
