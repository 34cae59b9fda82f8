"""The exceptions the binding raises; apart so _library can raise them
before anything else is loaded."""

from __future__ import annotations


class ArchfitError(Exception):
    """A call into libarchfit failed.

    ``status`` is the archfit_status name ("ARCHFIT_ERROR_INVALID_ARGUMENT");
    the message is archfit_last_error(), which names what was wrong.
    """

    def __init__(self, message: str, status: str = "ARCHFIT_ERROR_INTERNAL") -> None:
        super().__init__(message)
        self.status = status


class LibraryError(ArchfitError):
    """libarchfit could not be found or loaded, or speaks another ABI major."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "ARCHFIT_LIBRARY_UNAVAILABLE")
