"""The exceptions every failed Catalyst call raises.

Each C status code has one class. All derive from ``catalyst.Error`` (which carries
``code``, the code's name such as ``"INVALID_ARGUMENT"``, and ``message``, the ABI's
message word for word) and from the built-in exception a Python user would catch for it:

=====================  ==============================  =========================================
C status code          catalyst class                  also an instance of
=====================  ==============================  =========================================
INVALID_ARGUMENT       ``InvalidArgumentError``        ``ValueError`` and ``TypeError``
OUT_OF_MEMORY          ``OutOfMemoryError``            ``MemoryError``
UNSUPPORTED            ``UnsupportedError``            ``NotImplementedError``
NOT_FOUND              ``NotFoundError``               ``LookupError``
DEVICE_LOST            ``DeviceLostError``             ``RuntimeError``
INTERNAL               ``InternalError``               ``RuntimeError``
OUT_OF_RANGE           ``OutOfRangeError``             ``IndexError``
FAILED_PRECONDITION    ``FailedPreconditionError``     ``RuntimeError``
=====================  ==============================  =========================================

INVALID_ARGUMENT is both ValueError and TypeError because the ABI uses one code for a bad
value (a shape, an axis) and a bad type (a dtype mismatch). DLPack export failures raise
``DLPackError``, which is also a ``BufferError`` (what ``numpy.from_dlpack`` users catch).
Wrong Python types (a string where a tensor belongs) are plain ``TypeError`` from the
argument conversion, before any C call.
"""


class Error(Exception):
    """A Catalyst call failed. ``code`` is the status code's name, ``message`` the ABI's."""

    def __init__(self, message, code="INTERNAL"):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InvalidArgumentError(Error, ValueError, TypeError):
    pass


class OutOfMemoryError(Error, MemoryError):
    pass


class UnsupportedError(Error, NotImplementedError):
    pass


class NotFoundError(Error, LookupError):
    pass


class DeviceLostError(Error, RuntimeError):
    pass


class InternalError(Error, RuntimeError):
    pass


class OutOfRangeError(Error, IndexError):
    pass


class FailedPreconditionError(Error, RuntimeError):
    pass


class DLPackError(Error, BufferError):
    """A tensor cannot be exported through DLPack as asked (e.g. its device is not host-visible)."""


# Indexed by the C status code's value (ctl_status_code); the extension raises these.
BY_CODE = (None, InvalidArgumentError, OutOfMemoryError, UnsupportedError, NotFoundError, DeviceLostError,
           InternalError, OutOfRangeError, FailedPreconditionError)
