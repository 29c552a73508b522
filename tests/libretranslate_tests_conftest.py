"""The fixtures LibreTranslate's own API tests (libretranslate/tests/
test_api, from its release on PyPI) ask for, served by a running fanyi
server instead of LibreTranslate's Flask app: `client` sends each request
over HTTP to FANYI_URL, as Flask's test client would hand it to the app,
and answers with what the tests read of Flask's responses (status_code,
data, json). Installed as conftest.py beside those tests by
tests/libretranslate_own_tests.sh.
"""
import json
import os
import urllib.error
import urllib.parse
import urllib.request

import pytest


class Answer:
    def __init__(self, status_code, data):
        self.status_code = status_code
        self.data = data

    @property
    def json(self):
        try:
            return json.loads(self.data)
        except ValueError:
            return None


class Client:
    """Flask's test client's get and post, over HTTP."""

    def __init__(self, base):
        self.base = base.rstrip("/")

    def _send(self, method, path, data=None, json_body=None):
        headers = {}
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        elif data is not None:
            body = urllib.parse.urlencode(data).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif method == "POST":
            body = b""
        request = urllib.request.Request(self.base + path, data=body,
                                         headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return Answer(answer.status, answer.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read())

    def get(self, path, **kwargs):
        return self._send("GET", path, kwargs.get("data"), kwargs.get("json"))

    def post(self, path, **kwargs):
        return self._send("POST", path, kwargs.get("data"), kwargs.get("json"))


@pytest.fixture()
def app():
    return None


@pytest.fixture()
def client():
    return Client(os.environ["FANYI_URL"])
