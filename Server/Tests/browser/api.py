"""The server's API as the browser scripts call it beside the page: one request, and its answer."""
import http.client
import json
import urllib.parse


def send(url, token, method, path, body=None):
    """`method path` on the server at `url`, with `body` as JSON and the bearer `token` when given: the status and the
    body's bytes."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request(method, path, body=json.dumps(body) if body is not None else None,
                       headers={"Authorization": "Bearer " + token} if token else {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def edit(url, token, method, path, body=None):
    """An edit that must succeed: its JSON answer; exits with the status and answer otherwise."""
    status, data = send(url, token, method, path, body)
    if status != 200:
        raise SystemExit(f"{method} {path}: {status} {data[:300]!r}")
    return json.loads(data)
