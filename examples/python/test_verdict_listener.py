"""Unit tests of the verdict listener's own logic (`make test-clients` runs them with the venv's
Python; the listener against a real nats-server is tested by tools/clients.sh)."""

import asyncio
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nats.errors  # noqa: E402

import verdict_listener  # noqa: E402


class Sub:
    """A pull subscription whose `fetch` raises `error` once, then returns `messages`."""

    def __init__(self, error, messages):
        self.error, self.messages, self.calls = error, messages, 0

    async def fetch(self, batch, timeout):
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return self.messages


class FetchTest(unittest.TestCase):
    def fetch_twice(self, error):
        sub = Sub(error, ["verdict"])
        first = asyncio.run(verdict_listener.fetch(sub))
        second = asyncio.run(verdict_listener.fetch(sub))
        return first, second

    def test_nats_timeout_is_nothing_came(self):
        self.assertEqual(self.fetch_twice(nats.errors.TimeoutError()), ([], ["verdict"]))

    def test_bare_asyncio_timeout_is_nothing_came(self):
        # What nats-py 2.16's _fetch_n raises when the no-wait probe's answer used up the
        # timeout: the listener crashed on it after a restart on a busy machine.
        self.assertEqual(self.fetch_twice(asyncio.TimeoutError()), ([], ["verdict"]))

    def test_other_errors_are_not_swallowed(self):
        with self.assertRaises(nats.errors.ConnectionClosedError):
            self.fetch_twice(nats.errors.ConnectionClosedError())


if __name__ == "__main__":
    unittest.main()
