"""The embedded broker: kombu's filesystem transport, with message files that appear whole.

kombu 5.7's `filesystem` transport creates a message file under its final `.msg` name, then
locks and writes it. The worker lists the folder and renames each `.msg` file away before
reading it (the lock is advisory; a rename ignores it), so it can take a file that is still
empty: `json.loads("")` raises inside the consumer loop and Celery stops the worker
("Unrecoverable error: JSONDecodeError"), losing that message and every later one until a
worker starts again. Found by tests/e2e/test_multiprocess_load.py.

Here a producer writes the message under a name the worker never picks (`….msg.part`) and
renames it into place: a rename within one folder is atomic, so the worker sees the whole
message or none of it.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    # kombu's two base classes name the parameter differently (message, payload): mypy
    # cannot accept either name against both; this is kombu's filesystem signature.
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        # The same name kombu gives a message (its sort order is the delivery order).
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.part"  # the worker takes only names ending `.<queue>.msg`
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
