"""Signs in to lemonfiber-mcp as a provider-hosted assistant does, with the official Python MCP
SDK's OAuth client, for the interop tests.

From nothing but the MCP URL, the SDK discovers the server's metadata, registers, and sends the
person to the sign-in page; this script is the person, filling in the page's forms as a browser
without script would (a key or a key link, then Allow). Then the SDK exchanges the code, lists
and calls tools, and refreshes its token. With --revoke, the key is revoked on the demo stack
afterwards, a tool is called again, and the refresh grant is tried. It prints one JSON object of
what it saw.
"""

import argparse
import json
import ssl
import sys
import time
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:9/callback"


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Page(HTMLParser):
    """What a browser would see of the page: its forms' fields, its text, and any script."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.buttons: list[str] = []
        self.actions: list[str] = []
        self.scripts = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "form":
            self.actions.append(attrs.get("action", ""))
        if tag == "input" and attrs.get("type") == "hidden":
            self.fields[attrs["name"]] = attrs.get("value", "")
        if tag == "button" and attrs.get("name") == "decision":
            self.buttons.append(attrs.get("value", ""))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read_page(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


class Person:
    """Fills in the sign-in page in a browser of its own, as a person would."""

    def __init__(self, tls: ssl.SSLContext, credential: str) -> None:
        self.tls = tls
        self.credential = credential
        self.answer: AuthorizationCodeResult | None = None
        self.seen: dict = {}

    async def sign_in(self, authorization_url: str) -> None:
        origin = "{0.scheme}://{0.netloc}".format(urlparse(authorization_url))
        headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
        async with httpx2.AsyncClient(verify=self.tls, follow_redirects=False, timeout=60.0) as browser:
            first = await browser.get(authorization_url)
            asking = read_page(first.text)
            self.seen["first_page"] = {
                "status": first.status_code,
                "scripts": asking.scripts,
                "actions": asking.actions,
                "csp": first.headers.get("content-security-policy"),
            }
            second = await browser.post(
                f"{origin}/authorize", data={"form": asking.fields["form"], "credential": self.credential}, headers=headers
            )
            allowing = read_page(second.text)
            self.seen["second_page"] = {
                "status": second.status_code,
                "buttons": allowing.buttons,
                "text": " ".join(allowing.text),
            }
            back = await browser.post(
                f"{origin}/authorize", data={"form": allowing.fields["form"], "decision": "allow"}, headers=headers
            )
        location = back.headers["location"]
        self.seen["sent_back_to"] = location.split("?")[0]
        answer = {name: values[0] for name, values in parse_qs(urlparse(location).query).items()}
        self.answer = AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))

    async def come_back(self) -> AuthorizationCodeResult:
        assert self.answer is not None
        return self.answer


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True, help="the MCP endpoint")
    parser.add_argument("--trust", required=True, help="the server's certificate (PEM) to trust")
    parser.add_argument("--credential-file", required=True, help="the file holding the key or key link to give")
    parser.add_argument("--revoke", help="the demo's control URL that revokes the key, to call at the end")
    arguments = parser.parse_args()
    with open(arguments.credential_file) as file:
        credential = file.read().strip()
    tls = ssl.create_default_context(cafile=arguments.trust)
    person = Person(tls, credential)
    storage = Memory()
    provider = OAuthClientProvider(
        server_url=arguments.url,
        client_metadata=OAuthClientMetadata(
            client_name="Interop <test> assistant",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=person.sign_in,
        callback_handler=person.come_back,
    )
    seen: dict = {}
    async with httpx2.AsyncClient(auth=provider, verify=tls, timeout=httpx2.Timeout(30.0, read=120.0)) as http:
        transport = streamable_http_client(arguments.url, http_client=http)
        async with Client(transport, mode="auto", cache=None, read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            seen["tools"] = sorted(tool.name for tool in tools.tools)
            read = "read_status" if "read_status" in seen["tools"] else "read_requests"
            answer = await client.call_tool(read, {})
            seen["read"] = {"is_error": answer.is_error, "text": text_of(answer)}
            seen["person"] = person.seen
            seen["client_id_is_sealed"] = storage.client.client_id.startswith("lfmcp-client1.")
            first = storage.tokens
            seen["token_type"] = first.token_type
            seen["expires_in"] = first.expires_in

            # The access token runs out: the SDK refreshes it before the next request.
            provider.context.token_expiry_time = time.time() - 1
            again = await client.call_tool(read, {})
            seen["after_refresh"] = {
                "is_error": again.is_error,
                "access_token_changed": storage.tokens.access_token != first.access_token,
                "refresh_token_changed": storage.tokens.refresh_token != first.refresh_token,
            }
            async with httpx2.AsyncClient(verify=tls) as plain:
                token_endpoint = str(provider.context.oauth_metadata.token_endpoint)
                reused = await plain.post(
                    token_endpoint,
                    data={
                        "grant_type": "refresh_token",
                        "refresh_token": first.refresh_token,
                        "client_id": storage.client.client_id,
                    },
                )
                seen["old_refresh_token"] = {"status": reused.status_code, "error": reused.json().get("error")}

                if arguments.revoke:
                    async with httpx2.AsyncClient() as control:
                        revoked = await control.post(arguments.revoke)
                        revoked.raise_for_status()
                    after = await client.call_tool(read, {})
                    seen["after_revoke"] = {"is_error": after.is_error, "text": text_of(after)}
                    refreshed = await plain.post(
                        token_endpoint,
                        data={
                            "grant_type": "refresh_token",
                            "refresh_token": storage.tokens.refresh_token,
                            "client_id": storage.client.client_id,
                        },
                    )
                    seen["refresh_after_revoke"] = {"status": refreshed.status_code, "error": refreshed.json().get("error")}
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    anyio.run(main)
