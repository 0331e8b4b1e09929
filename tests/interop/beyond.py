"""Drives lemonfiber-mcp's consent, live resources, prompts and completions with the official Python
MCP SDK, for the interop tests (tests/beyond.rs).

It connects over stdio (starting the server) or over Streamable HTTP (bearer key, trusting the
server's certificate), in the SDK's auto mode (2026-07-28) or legacy mode (2025-11-25), runs one
scenario and prints one JSON object of what it saw:

- consent: rehearses an action (pausing downloads unless --act names another) and acts on the offer twice, answering every question the
  server puts to the person as --answer says (or declaring no elicitation at all with --answer none).
  With --direct the act tool is called with the arguments themselves, for an action with no rehearsal;
  with --move the demo's control endpoint is asked to do that between the rehearsal and the act.
- unanswered: on 2026-07-28, brings the person's yes back with the sealed question changed, then as
  it was handed out.
- no: answers the question in every way that is not the person's yes to it (in a session: decline,
  cancel, an error, an accept without agreeing; on 2026-07-28, by hand: decline, cancel, and a yes or
  a no brought back with the question changed, with another offer's question, or under another name).
- watch: watches a resource, has the demo's control endpoint change it, waits for the update, stops
  watching, changes it back and waits again.
- prompts: lists prompts, gets each with arguments, and asks for completions.
"""

import argparse
import json
import sys
import time
import warnings

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError

from connection import add_arguments, connected, text_of


async def consent(arguments) -> dict:
    questions: list = []

    async def answer(context, params):
        questions.append({"message": params.message, "schema": params.requested_schema})
        if arguments.answer == "accept":
            return types.ElicitResult(action="accept", content={"agree": True})
        return types.ElicitResult(action=arguments.answer)

    options = {} if arguments.answer == "none" else {"elicitation_callback": answer}
    async with connected(arguments, **options) as client:
        if arguments.direct:
            rehearsed, given = None, json.loads(arguments.arguments)
        else:
            rehearsed = await client.call_tool(f"rehearse_{arguments.act}", json.loads(arguments.arguments))
            given = {"offer": (rehearsed.structured_content or {}).get("data", {}).get("offer")}
        if arguments.move:
            await control(arguments, arguments.move)
        calls = []
        for _ in range(2):
            result = await client.call_tool(arguments.act, given)
            calls.append({
                "is_error": result.is_error,
                "text": text_of(result),
                "consent": (result.meta or {}).get("consent"),
                "kind": (result.structured_content or {}).get("kind"),
            })
        return {
            "protocol": client.protocol_version,
            "rehearsal": text_of(rehearsed) if rehearsed else None,
            "questions": questions,
            "calls": calls,
        }


async def unanswered(arguments) -> dict:
    """On 2026-07-28, drives the rounds by hand: the call that asks, then the answer brought back
    with the question changed, and then with the question as it was handed out."""

    async def never_called(context, params):
        raise AssertionError("the rounds are driven by hand")

    async with connected(arguments, elicitation_callback=never_called) as client:
        yes = {"consent": types.ElicitResult(action="accept", content={"agree": True})}
        seen: dict = {"protocol": client.protocol_version}
        for name in ["changed", "as_handed_out"]:
            rehearsed = await client.call_tool("rehearse_downloads_pause", {})
            offer = (rehearsed.structured_content or {}).get("data", {}).get("offer")
            first = await client.session.call_tool("downloads_pause", {"offer": offer}, allow_input_required=True)
            question = first.request_state or ""
            if name == "changed":
                seen["input_required"] = isinstance(first, types.InputRequiredResult)
                seen["asks"] = sorted((first.input_requests or {}).keys()) if seen["input_required"] else None
                question = question[:-2] + ("AA" if not question.endswith("AA") else "BB")
            result = await client.session.call_tool(
                "downloads_pause", {"offer": offer}, input_responses=yes, request_state=question, allow_input_required=True
            )
            seen[name] = {
                "is_error": getattr(result, "is_error", None),
                "text": text_of(result) if hasattr(result, "content") else None,
                "consent": (getattr(result, "meta", None) or {}).get("consent"),
            }
        return seen


def called(result) -> dict:
    """What a call answered, whether it finished or asks for input again."""
    return {
        "is_error": getattr(result, "is_error", None),
        "input_required": isinstance(result, types.InputRequiredResult),
        "text": text_of(result) if hasattr(result, "content") else None,
    }


async def no(arguments) -> dict:
    """Every answer that is not the person's yes to the question asked, each on a fresh offer."""
    answers = iter([
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        None,
        types.ElicitResult(action="accept", content={"agree": False}),
    ])

    async def answer(context, params):
        given = next(answers)
        if given is None:
            return types.ErrorData(code=-32600, message="the person's client failed to ask")
        return given

    async def offer_of(client) -> str:
        rehearsed = await client.call_tool("rehearse_downloads_pause", {})
        return (rehearsed.structured_content or {}).get("data", {}).get("offer")

    seen: dict = {}
    async with connected(arguments, elicitation_callback=answer) as client:
        seen["protocol"] = client.protocol_version
        if arguments.mode == "legacy":
            for name in ["decline", "cancel", "error", "accept_without_agreeing"]:
                seen[name] = called(await client.call_tool("downloads_pause", {"offer": await offer_of(client)}))
            return seen
        yes = types.ElicitResult(action="accept", content={"agree": True})
        decline = types.ElicitResult(action="decline")
        cancel = types.ElicitResult(action="cancel")

        async def asked(offer: str) -> str:
            first = await client.session.call_tool("downloads_pause", {"offer": offer}, allow_input_required=True)
            return first.request_state or ""

        def changed(state: str) -> str:
            return state[:-2] + ("AA" if not state.endswith("AA") else "BB")

        other_offer = await offer_of(client)
        other_question = await asked(other_offer)
        for name, responses, state_of in [
            ("decline", {"consent": decline}, lambda state: state),
            ("cancel", {"consent": cancel}, lambda state: state),
            ("decline_changed", {"consent": decline}, changed),
            ("cancel_changed", {"consent": cancel}, changed),
            ("yes_changed", {"consent": yes}, changed),
            ("yes_to_another_offer", {"consent": yes}, lambda state: other_question),
            ("decline_to_another_offer", {"consent": decline}, lambda state: other_question),
            ("yes_under_another_name", {"agree": yes}, lambda state: state),
            ("decline_under_another_name", {"no": decline}, lambda state: state),
            ("another_kind_of_answer", {"consent": types.ListRootsResult(roots=[])}, lambda state: state),
        ]:
            offer = await offer_of(client)
            state = state_of(await asked(offer))
            result = await client.session.call_tool(
                "downloads_pause", {"offer": offer}, input_responses=responses, request_state=state,
                allow_input_required=True,
            )
            seen[name] = called(result)
    return seen


async def control(arguments, what: str) -> None:
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"{arguments.control}/{what}")
        response.raise_for_status()


async def watch(arguments) -> dict:
    updates: list = []
    seen = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
            seen.set()

    async def wait_for_update(within: float) -> float | None:
        started = time.monotonic()
        with anyio.move_on_after(within):
            await seen.wait()
            return time.monotonic() - started
        return None

    async with connected(arguments, message_handler=on_message) as client:
        seen_report: dict = {"protocol": client.protocol_version}
        if arguments.mode == "legacy":
            await client.subscribe_resource(arguments.uri)
            await anyio.sleep(arguments.settle)
            await control(arguments, "downloads/pause")
            seen_report["updated_after"] = await wait_for_update(arguments.within)
            seen_report["updates"] = list(updates)
            await client.unsubscribe_resource(arguments.uri)
            seen = anyio.Event()
            await control(arguments, "downloads/resume")
            await anyio.sleep(arguments.within)
            seen_report["updates_after_unsubscribe"] = updates[len(seen_report["updates"]):]
        else:
            async with client.listen(resource_subscriptions=[arguments.uri]) as subscription:
                seen_report["honored"] = list(subscription.honored.resource_subscriptions or [])
                await anyio.sleep(arguments.settle)
                await control(arguments, "downloads/pause")
                started = time.monotonic()
                seen_report["updated_after"] = None
                with anyio.move_on_after(arguments.within):
                    async for event in subscription:
                        if getattr(event, "uri", None) == arguments.uri:
                            seen_report["updated_after"] = time.monotonic() - started
                            seen_report["updates"] = [event.uri]
                            break
            await control(arguments, "downloads/resume")
        return seen_report


async def prompts(arguments) -> dict:
    async with connected(arguments) as client:
        listed = await client.list_prompts()
        seen: dict = {
            "protocol": client.protocol_version,
            "prompts": sorted(prompt.name for prompt in listed.prompts),
            "arguments": {prompt.name: sorted(a.name for a in prompt.arguments or []) for prompt in listed.prompts},
        }
        rendered = {}
        for prompt in listed.prompts:
            given = {argument.name: arguments.value for argument in (prompt.arguments or [])[:1]}
            got = await client.get_prompt(prompt.name, given)
            rendered[prompt.name] = [message.content.text for message in got.messages]
        seen["rendered"] = rendered
        held = await client.call_tool("read_held", {})
        seen["held"] = [title["id"] for title in (held.structured_content or {}).get("data", {}).get("holdings", [])]
        template = types.ResourceTemplateReference(uri="lemonfiber://read/held/{id}")
        seen["titles"] = (await client.complete(template, {"name": "id", "value": ""})).completion.values
        seen["titles_narrowed"] = (
            await client.complete(template, {"name": "id", "value": arguments.prefix})
        ).completion.values
        with_title = next(prompt.name for prompt in listed.prompts if "title" in seen["arguments"][prompt.name])
        prompt_title = types.PromptReference(name=with_title)
        seen["titles_by_prompt"] = (
            await client.complete(prompt_title, {"name": "title", "value": arguments.prefix})
        ).completion.values
        seen["titles_by_name"] = (
            await client.complete(prompt_title, {"name": "title", "value": "arr"})
        ).completion.values
        services = types.PromptReference(name="why_stuck")
        try:
            seen["services"] = (await client.complete(services, {"name": "service", "value": ""})).completion.values
        except MCPError as refused:
            # A prompt the key is not offered is invalid params (issue 29), not an empty list.
            seen["services"] = {"error": refused.code}
        return seen


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("scenario", choices=["consent", "unanswered", "no", "watch", "prompts"])
    add_arguments(parser)
    parser.add_argument("--answer", choices=["accept", "decline", "cancel", "none"], default="accept")
    parser.add_argument("--act", default="downloads_pause", help="consent: the act tool")
    parser.add_argument("--arguments", default="{}", help="consent: the rehearsal's arguments, as JSON")
    parser.add_argument("--direct", action="store_true", help="consent: call the act tool with the arguments, unrehearsed")
    parser.add_argument("--control", help="watch, consent --move: the demo's control endpoint")
    parser.add_argument("--move", help="consent: what the control endpoint does before the act")
    parser.add_argument("--uri", default="lemonfiber://read/status", help="watch: the resource")
    parser.add_argument("--within", type=float, default=10.0, help="watch: seconds to wait for an update")
    parser.add_argument("--settle", type=float, default=1.5, help="watch: seconds before changing the resource")
    parser.add_argument("--value", default="Arrival", help="prompts: the value each prompt's first argument gets")
    parser.add_argument("--prefix", default="ttl-a", help="prompts: what is typed before completing a title")
    arguments = parser.parse_args()
    scenario = {"consent": consent, "unanswered": unanswered, "no": no, "watch": watch, "prompts": prompts}[
        arguments.scenario
    ]
    json.dump(await scenario(arguments), sys.stdout)


if __name__ == "__main__":
    # resources/subscribe is how the versions before 2026-07-28 watch a resource, which is tested here knowingly.
    warnings.filterwarnings("ignore", message="resources/(un)?subscribe is removed")
    anyio.run(main)
