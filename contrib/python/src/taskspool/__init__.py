"""Client for the taskspool HTTP API.

The wire format is described by contrib/openapi/openapi.yaml and the
README's "The HTTP API" section: requests are signed with the TS1 scheme
(HMAC-SHA256 over a canonical string), errors are RFC 9457 problem+json.
Standard library only.
"""

__version__ = "0.11.0"

__all__ = ["__version__"]
