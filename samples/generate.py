"""Write the bundled sample event stream from the texts and tables in ``samples/corpus.yaml``.

    python samples/generate.py [--out PATH] [--readme PATH | --no-readme]

By default it writes ``samples/events.jsonl`` (a link to ``sidecar/data/events.jsonl``) and
refreshes the counts block of ``samples/README.md``; the counts are printed either way. The
output is deterministic: one ``random.Random`` with a fixed seed drives every choice, in a fixed
order, so re-running reproduces the file byte for byte (``tests/test_samples.py`` checks it).
Editing the corpus or the order of the draws here changes the stream: commit both together.

Every well-formed line is an event in wire format v1; a handful of deliberately malformed lines
exercise the dead-letter path. Each event carries ``labels.kind`` (the category it was generated
as) and, where useful, ``labels.expected`` (what the response really is: the ground truth a check
should reproduce, e.g. ``"refusal"`` or ``"invalid_json"``). The generator checks its own output
as it goes (refusal phrases, rejection and detection keywords, broken JSON, Luhn, IBAN).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from sidecar.checks.rgb import (
    ERROR_DETECTION_KEYWORDS,
    PRIMARY_REJECTION_PHRASES,
    REJECTION_KEYWORDS,
)

SEED = 20250603
START = datetime(2025, 6, 3, 14, 0, 0, tzinfo=UTC)
HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.yaml"
OUT = HERE / "events.jsonl"
README = HERE / "README.md"
MONTHS = "January February March April May June July August September October November December"
FIELD_ORDER = [
    *("id", "ts", "model", "route", "tenant", "task", "system_prompt", "prompt", "contexts"),
    *("ground_truths", "counterfactual_answers", "response", "attack"),
]
# As the RGB checks use them: a rejection must contain a rejection phrase, a supported answer
# none; a flagged counterfactual must contain a detection keyword.
REJECTION_MARKERS = [*PRIMARY_REJECTION_PHRASES, *REJECTION_KEYWORDS]
DETECTION_MARKERS = list(ERROR_DETECTION_KEYWORDS)
Event = dict[str, Any]


def has_any(text: str, markers: list[str]) -> bool:
    low = text.lower()
    return any(m in low for m in markers)


def luhn_ok(number: str) -> bool:
    digits = [int(c) for c in number if c.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        total += (d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 else d
    return total % 10 == 0


def iban_ok(iban: str) -> bool:
    s = iban.replace(" ", "")
    return int("".join(str(int(c, 36)) for c in s[4:] + s[:4])) % 97 == 1


def load_corpus(path: Path = CORPUS) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    corpus: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return corpus


class Builder:
    """Turns the corpus into events. Each section draws from ``self.rng`` in a fixed order."""

    def __init__(self, corpus: dict[str, Any], seed: int) -> None:
        self.c = corpus
        self.rng = random.Random(seed)
        self.events: list[Event] = []
        self.refusal_markers: list[str] = corpus["refusal_markers"]

    def emit(self, kind: str, labels: Event | None = None, **ev: Any) -> None:
        """Add an event of ``kind``: the kind's labels from the corpus, then ``labels``."""
        ev["labels"] = {"kind": kind, **self.c["kinds"][kind], **(labels or {})}
        self.events.append(ev)

    def route(self, sp: str | None) -> str:
        return "/support" if sp in self.c["stream"]["support_system_prompts"] else "/chat"

    def system(self, sp: str) -> Event:
        p = self.c["system_prompts"][sp]
        return {"system_prompt": p["text"], "tenant": p["tenant"]}

    def person(self) -> tuple[str, str, str]:
        rng, names = self.rng, self.c["people"]
        first, last = rng.choice(names["first_names"]), rng.choice(names["last_names"])
        domain = rng.choice(self.c["pii"]["email_domains"])
        return first, last, f"{first[0]}.{last}".lower().replace("'", "") + "@" + domain

    def phone(self) -> str:
        # fictional ranges: 555-01xx (US), 020 7946 0xxx (UK), 0491 570 110-159 (Australia)
        r = self.rng
        return r.choice(
            [
                f"+1 (555) 01{r.randint(0, 99):02d}",
                f"555-01{r.randint(0, 99):02d}",
                f"+44 20 7946 0{r.randint(0, 999):03d}",
                f"+61 491 570 {r.randint(110, 159)}",
            ]
        )

    # ---- chat -------------------------------------------------------------------------------
    def chat(self) -> None:
        rng, c = self.rng, self.c["chat"]
        for conv in c["conversations"]:
            sp = conv.get("system")
            for _ in range(2 if rng.random() < 0.3 else 1):
                p = rng.choice(c["openers"]) + conv["prompt"] if sp is None else conv["prompt"]
                ev = dict(task="chat", prompt=p, response=conv["response"], route=self.route(sp))
                if sp is None:
                    self.emit("chat", **ev)
                else:
                    labels = {"system_prompt_id": sp, "expected": "no_leak"}
                    self.emit("chat", labels, **ev, **self.system(sp))
        convert, tip_ = c["convert"], c["tip"]
        for _ in range(8):
            u, n = rng.choice(convert["units"]), rng.choice(convert["amounts"])
            f = {"n": n, "a": u["from"], "b": u["to"], "one": u["one"], "s": u["short"]}
            p = rng.choice(convert["prompts"]).format(**f)
            r = rng.choice(convert["replies"]).format(**f, v=n * u["factor"], f=u["factor"])
            self.emit("chat", task="chat", prompt=p, response=r, route="/chat")
        for _ in range(5):
            amt, p = rng.choice(tip_["amounts"]), rng.choice(tip_["percents"])
            k, tpl = rng.choice(tip_["ways"]), rng.choice(tip_["prompts"])
            tip = round(amt * p / 100, 2)
            total = round(amt + tip, 2)
            reply = tip_["split_reply"] if "split" in tpl else tip_["reply"]
            r = reply.format(p=p, amt=amt, tip=tip, total=total, k=k, each=total / k)
            self.emit(
                "chat", task="chat", prompt=tpl.format(amt=amt, p=p, k=k), response=r, route="/chat"
            )
        for o in c["over_refusals"]:
            assert has_any(o["response"], self.refusal_markers), o
            self.emit("over_refusal", task="chat", route="/chat", **o)

    # ---- RAG --------------------------------------------------------------------------------
    def _contexts(self, item: Event, passage: str | None, n: int) -> tuple[list[str], int]:
        rng, rag = self.rng, self.c["rag"]
        general = rag["distractors"]["general"]
        same = [
            o["passage"].format(v=o["gold"])
            for o in rag["items"]
            if o is not item and o["domain"] == item["domain"]
        ]
        pool = same + rag["distractors"].get(item["domain"], []) + general
        chosen: list[str] = []
        for cand in rng.sample(pool, len(pool)):
            if cand not in chosen and (
                len(chosen) < 2 or cand not in general or rng.random() < 0.5
            ):
                chosen.append(cand)
            if len(chosen) >= n - (passage is not None):
                break
        idx = -1
        if passage is not None:
            idx = rng.randrange(len(chosen) + 1) if rng.random() < 0.6 else 0
            chosen.insert(idx, passage)
        return chosen, idx

    def _rag_event(self, kind: str, item: Event, labels: Event, **ev: Any) -> None:
        rng, q = self.rng, item["q"]
        prompt = rng.choice(self.c["rag"]["prompt_forms"]).format(q=q, q_lc=q[0].lower() + q[1:])
        task = "rag" if rng.random() < 0.7 else "qa"
        ev.setdefault("ground_truths", item.get("ground_truths") or [item["gold"]])
        if rng.random() < 0.25 and "system_prompt" not in ev:
            ev["system_prompt"] = self.c["system_prompts"]["search-rag"]["text"]
            labels["system_prompt_id"] = "search-rag"
        if item["domain"] in self.c["stream"]["tenants"]:
            ev.setdefault("tenant", item["domain"])
        route = "/search" if task == "rag" else "/support"
        self.emit(kind, labels, task=task, route=route, prompt=prompt, **ev)

    def _cite(self, idx: int) -> str:
        return f" [{idx + 1}]" if idx >= 0 and self.rng.random() < 0.6 else ""

    def _answered(self, item: Event, kind: str, value: str) -> None:
        passage = item["passage"].format(v=item["gold"])
        ctx, idx = self._contexts(item, passage, self.rng.randint(2, 5))
        answer = item["answer"].format(v=value, c=self._cite(idx))
        assert kind != "rag_correct" or not has_any(answer, REJECTION_MARKERS), answer
        self._rag_event(kind, item, {"answer_context": idx}, contexts=ctx, response=answer)

    def rag(self) -> None:
        rng, rag = self.rng, self.c["rag"]
        items = rag["items"]
        # correct answers, then wrong ones (the right passage was there, the model got it wrong)
        for item in items + rng.sample(items, 12):
            self._answered(item, "rag_correct", item["gold"])
        for item in rng.sample(items, 14):
            self._answered(item, "rag_incorrect", item["wrong"])
        # negative rejection: no passage holds the answer
        for n, item in enumerate(rng.sample(items, 18)):
            ctx, _ = self._contexts(item, None, rng.randint(2, 4))
            if n >= 14:
                answer = item["answer"].format(v=item["wrong"], c="")
                assert not has_any(answer, REJECTION_MARKERS), answer
                self._rag_event("rag_negative_answered", item, {}, contexts=ctx, response=answer)
                continue
            sp = n % 4 == 0  # the search-rag prompt dictates the first reply word for word
            replies = rag["negative_replies"]
            reply = (replies[0] if sp else rng.choice(replies[1:])).format(topic=_topic(ctx[0]))
            assert has_any(reply, REJECTION_MARKERS), reply
            labels: Event = {"system_prompt_id": "search-rag"} if sp else {}
            extra = {"system_prompt": self.system("search-rag")["system_prompt"]} if sp else {}
            self._rag_event(
                "rag_negative_rejected", item, labels, contexts=ctx, response=reply, **extra
            )
        # counterfactual robustness: the passages carry a planted false fact
        public = [i for i in items if i.get("public")]
        for n, item in enumerate(rng.sample(public, len(public)) + rng.sample(public, 4)):
            ctx, idx = self._contexts(item, item["passage"].format(v=item["cf"]), rng.randint(2, 4))
            if n % 2 == 0:
                kind = "rag_counterfactual_repeated"
                answer = item.get("cf_answer", item["answer"]).format(
                    v=item["cf"], c=self._cite(idx)
                )
                assert not has_any(answer, DETECTION_MARKERS), answer
            else:
                kind = "rag_counterfactual_flagged"
                good = item["answer"].format(v=item["gold"], c="")
                answer = rng.choice(rag["flag_templates"]).format(
                    i=idx + 1, cf=item["cf"], gold=item["gold"], answer=good,
                    answer_lc=good[0].lower() + good[1:],
                )  # fmt: skip
                assert has_any(answer, DETECTION_MARKERS), answer
                assert item["gold"] in answer, answer
            self._rag_event(
                kind, item, {"answer_context": idx}, contexts=ctx, response=answer,
                counterfactual_answers=[item["cf"]],
            )  # fmt: skip

    # ---- summarization ----------------------------------------------------------------------
    def summarization(self) -> None:
        rng, c = self.rng, self.c["summarization"]
        for src in c["sources"]:
            styles = ["one", "bullets"]
            if rng.random() < 0.5:
                styles.append(rng.choice(["one", "bullets"]))
            route = "/support" if src["title"] in c["support_titles"] else "/chat"
            for style in styles:
                p = rng.choice(c["prompts"][style]).format(title=src["title"], text=src["text"])
                ev = dict(task="summarization", route=route, prompt=p, response=src[style])
                self.emit("summary_faithful", {"style": style}, **ev)
        for src in rng.sample(c["sources"], 7):
            p = rng.choice(c["prompts"]["one"]).format(title=src["title"], text=src["text"])
            ev = dict(task="summarization", route="/chat", prompt=p, response=src["bad"])
            self.emit("summary_unfaithful", {"note": src["bad_note"]}, **ev)

    # ---- extraction -------------------------------------------------------------------------
    def document(self, kind: str) -> tuple[str, Event]:
        """A source document for one extraction and the object that correctly describes it."""
        rng, c, names = self.rng, self.c["extraction"], self.c["people"]
        # documents are dated before the stream (June 2025); shipment ETAs fall after it
        month = 6 if kind == "shipment" else rng.randint(1, 5)
        day = rng.randint(4, 28) if kind == "shipment" else rng.randint(1, 28)
        date = f"2025-{month:02d}-{day:02d}"
        f: Event = {"date": date, "pretty": f"{MONTHS.split()[month - 1]} {day}, 2025"}
        if kind == "invoice":
            vendor, number = rng.choice(c["vendors"]), f"INV-{rng.randint(10000, 99999)}"
            total = round(rng.uniform(80, 9500), 2)
            currency = rng.choice(list(c["currencies"]))
            obj = dict(vendor=vendor, invoice_number=number, issue_date=date, total=total)
            obj["currency"] = currency
            f |= obj | {"number": number, "sym": c["currencies"][currency]}
            f |= {"subtotal": total / 1.2, "tax": total - total / 1.2}
        elif kind == "contact":
            first, last = rng.choice(names["first_names"]), rng.choice(names["last_names"])
            company, role = rng.choice(c["companies"]), rng.choice(c["roles"])
            email = f"{first}.{last}".lower().replace("'", "") + "@"
            email += rng.choice(c["contact_domains"])
            obj = {"name": f"{first} {last}", "email": email, "company": company, "title": role}
            f |= obj | {"first": first, "last": last, "last_upper": last.upper(), "role": role}
        elif kind == "ticket":
            cid, product = f"C-{rng.randint(100000, 999999)}", rng.choice(c["products"])
            obj = {"customer_id": cid, "product": product, **rng.choice(c["issues"])}
            f |= obj | {"cid": cid}
        elif kind == "shipment":
            carrier = rng.choice(c["carriers"])
            tracking = {  # every carrier's number is drawn, whichever is used
                "UPS": f"1Z{rng.randint(10**15, 10**16 - 1)}",
                "FedEx": f"{rng.randint(10**11, 10**12 - 1)}",
                "DHL": f"{rng.randint(10**9, 10**10 - 1)}",
                "USPS": f"9400{rng.randint(10**17, 10**18 - 1)}",
            }[carrier]
            status = rng.choice(list(c["shipment_statuses"]))
            human = c["shipment_statuses"][status].format(city=rng.choice(c["cities"]))
            obj = {"tracking_number": tracking, "carrier": carrier, "status": status, "eta": date}
            f |= {"carrier": carrier, "tracking": tracking, "human": human}
        else:
            people = rng.sample(names["first_names"], 3)
            topic = rng.choice(c["meeting_topics"])
            action = rng.choice(c["meeting_actions"]).format(people=people)
            obj = {"title": topic, "date": date, "attendees": people, "action_items": [action]}
            f |= {"topic": topic, "present": ", ".join(people), "action": action}
        tpl = c["documents"][kind]
        return (tpl if isinstance(tpl, str) else rng.choice(tpl)).format(**f), obj

    def extraction(self) -> None:
        rng, c = self.rng, self.c["extraction"]
        plan = ["valid"] * 14 + ["fenced"] * 8 + ["broken"] * 8 + ["missing_keys"] * 7
        kinds = list(c["specs"])
        for n, variant in enumerate(plan):
            kind = kinds[n % len(kinds)]
            keys = c["specs"][kind]
            doc, obj = self.document(kind)
            prompt = rng.choice(c["prompts"]).format(
                keys_list=", ".join(keys), keys_json=json.dumps(keys), kind=kind, doc=doc
            )
            labels: Event = {"required_keys": keys, "schema": kind}
            if variant == "valid":
                response = json.dumps(obj, ensure_ascii=False, indent=rng.choice([None, 2]))
            elif variant == "fenced":
                body = json.dumps(obj, ensure_ascii=False, indent=2)
                response = f"{rng.choice(c['fence_prefixes'])}```json\n{body}\n```"
            elif variant == "broken":
                response, labels["defect"] = self.break_json(obj)
            else:
                drop = rng.sample(keys, rng.choice([1, 1, 2]))
                partial = {k: v for k, v in obj.items() if k not in drop}
                if rng.random() < 0.4:  # renamed rather than dropped: camelCase, or a suffix
                    k = drop[0]
                    camel = re.sub(r"_(\w)", lambda m: m.group(1).upper(), k)
                    partial[camel + ("" if "_" in k else "Value")] = obj[k]
                response = json.dumps(partial, ensure_ascii=False)
                labels["missing_keys"] = sorted(drop)
            ev = dict(task="extraction", route="/extract", prompt=prompt, response=response)
            if rng.random() < 0.35:
                ev["system_prompt"] = self.c["system_prompts"]["extract-json"]["text"]
            self.emit(f"extraction_{variant}", labels, **ev)

    def break_json(self, obj: Event) -> tuple[str, str]:
        """Turn a good object into text that is not valid JSON, and say how it is broken."""
        good = json.dumps(obj, indent=2, ensure_ascii=False)
        how = self.rng.choice(
            ["trailing_comma", "single_quotes", "truncated", "unquoted_keys", "python_literals"]
        )
        if how == "trailing_comma":
            text = good[:-2] + ",\n}"
        elif how == "single_quotes":
            text = "{" + ", ".join(f"'{k}': {v!r}" for k, v in obj.items()) + "}"
        elif how == "truncated":
            text = good[: int(len(good) * self.rng.uniform(0.45, 0.8))]
        elif how == "unquoted_keys":
            text = "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in obj.items()) + "}"
        else:
            text = repr(dict(obj, verified=True, notes=None))
        try:
            json.loads(text)
        except ValueError:
            return text, how
        raise AssertionError(f"{how} produced valid JSON")

    # ---- attacks ----------------------------------------------------------------------------
    def attacks(self) -> None:
        rng, c = self.rng, self.c["attacks"]
        for a in c["items"]:
            sp = a.get("system")
            attack = {"category": a["category"], "technique": a["technique"]}
            base = dict(task="chat", prompt=a["prompt"], attack=attack, route=self.route(sp))
            base |= self.system(sp) if sp else {}
            sp_label = {"system_prompt_id": sp} if sp else {}
            refusals = list(a["refusals"])
            if rng.random() < 0.3:
                refusals.append(rng.choice(c["generic_refusals"]))
            for r in refusals:
                assert has_any(r, self.refusal_markers), r
                self.emit("attack_refused", sp_label, **base, response=r)
            if a.get("resisted"):
                self.emit("attack_resisted", **base, response=a["resisted"])
            if a.get("partial"):
                assert has_any(a["partial"], self.refusal_markers), a["partial"]
                self.emit("attack_partial", **base, response=a["partial"])
            if a.get("complied"):
                assert not has_any(a["complied"], self.refusal_markers), a["complied"]
                leak = {"leak": a["leak"]} if a.get("leak") else {}
                self.emit("attack_complied", sp_label | leak, **base, response=a["complied"])
        # indirect prompt injection through content the model processes
        ind = c["indirect"]
        inj = {"category": "advanced", "technique": "indirect_prompt_injection"}
        page = ind["page_prompt"].format(page=ind["page"])
        for kind in ("attack_resisted", "attack_complied"):
            response = ind["page_resisted" if kind == "attack_resisted" else "page_complied"]
            ev = dict(
                task="summarization", route="/chat", prompt=page, attack=inj, response=response
            )
            self.emit(kind, {"vector": "web_page"}, **ev)
        ret = self.c["rag"]["items"][0]
        for complied in (False, True, True):
            ctx, _ = self._contexts(ret, ret["passage"].format(v=ret["gold"]), 3)
            ctx.insert(rng.randrange(len(ctx) + 1), ind["context"])
            response = rng.choice(ind["context_complied"]) if complied else ind["context_resisted"]
            self.emit(
                "attack_complied" if complied else "attack_resisted",
                {"vector": "retrieved_context"},
                task="rag", route="/search", prompt=ret["q"], contexts=ctx,
                ground_truths=[ret["gold"]], response=response, attack=inj,
            )  # fmt: skip

    # ---- attack attempts in live traffic ----------------------------------------------------
    def organic(self) -> None:
        """Attack attempts without an ``attack`` label, refused and complied with: what only
        the ``attack_attempt`` check finds."""
        for a in self.c["organic"]:
            sp = a.get("system")
            base = dict(task="chat", prompt=a["prompt"], route=self.route(sp))
            base |= self.system(sp) if sp else {}
            assert has_any(a["refused"], self.refusal_markers), a["refused"]
            assert not has_any(a["complied"], self.refusal_markers), a["complied"]
            self.emit("organic_refused", **base, response=a["refused"])
            self.emit("organic_complied", **base, response=a["complied"])

    # ---- leakage ----------------------------------------------------------------------------
    def leakage(self) -> None:
        rng, c = self.rng, self.c["leakage"]
        names = list(c["fragments"])
        prompts = iter(rng.sample(c["prompts"] * 3, len(names) * 3))
        for sp in names:
            verbatim = rng.choice(c["verbatim_forms"]).format(text=self.system(sp)["system_prompt"])
            styles = ("verbatim", verbatim), ("fragment", c["fragments"][sp])
            for style, response in (*styles, ("paraphrase", c["paraphrases"][sp])):
                p = next(prompts)
                attack = {"category": p["category"], "technique": "prompt_extraction"}
                labels = {"leak": style, "system_prompt_id": sp, "outcome": "complied"}
                ev = dict(task="chat", route=self.route(sp), prompt=p["prompt"], attack=attack)
                self.emit(f"leak_{style}", labels, **ev, **self.system(sp), response=response)
        for leak in c["casual"]:
            sp = leak["system"]
            ev = dict(
                task="chat", route=leak["route"], prompt=leak["prompt"], response=leak["response"]
            )
            self.emit(
                "leak_fragment",
                {"leak": "fragment", "system_prompt_id": sp},
                **ev,
                **self.system(sp),
            )

    # ---- PII and links ----------------------------------------------------------------------
    def pii(self) -> None:
        rng, c = self.rng, self.c["pii"]
        cards, not_a_card, ibans = c["test_cards"], c["not_a_card"], c["ibans"]
        assert all(luhn_ok(n) for n in cards)
        assert not luhn_ok(not_a_card)
        assert all(iban_ok(i) for i in ibans)

        def add(
            prompt: str, response: str, pii: list[str], where: str = "response", **labels: Any
        ) -> None:
            labels = {"pii": sorted(pii), "pii_in": where, **labels}
            ev = dict(
                prompt=prompt, response=response, route="/support", task="chat", tenant="acme"
            )
            self.emit("pii", labels, **ev)

        t = c["contact_update"]
        for _ in range(3):
            first, last, email = self.person()
            f = {"first": first, "last": last, "email": email, "phone": self.phone()}
            add(
                t["prompt"].format(**f),
                rng.choice(t["responses"]).format(**f),
                ["email", "phone"],
                "both",
            )
        t = c["card_declined"]
        for card in cards:
            first, _, _ = self.person()
            add(
                t["prompt"].format(first=first),
                rng.choice(t["responses"]).format(card=card),
                ["credit_card"],
            )
        self.person()  # drawn and unused; kept so the stream stays as it is
        t = c["order_number"]
        p, r = t["prompt"].format(number=not_a_card), t["response"].format(number=not_a_card)
        add(p, r, [], "none", expected="no_pii", note=t["note"])
        t = c["bank_transfer"]
        for iban in ibans:
            ref = f"ACME-{rng.randint(100000, 999999)}"
            add(t["prompt"], rng.choice(t["responses"]).format(iban=iban, ref=ref), ["iban"])
        t = c["staff_contact"]
        for _ in range(3):
            first, last, email = self.person()
            f = {"first": first, "last": last, "email": email, "phone": self.phone()}
            add(rng.choice(t["prompts"]), t["response"].format(**f), ["email", "phone"])
        _, _, email = self.person()
        t = c["double_charge"]
        p = t["prompt"].format(card=cards[0], email=email)
        add(p, t["response"], ["credit_card", "email"], "prompt")
        first, last, email = self.person()
        t = c["reservation"]
        f = {"first": first, "last": last, "email": email, "phone": self.phone(), "card": cards[1]}
        r = t["response"].format(**f, iban=ibans[0])
        add(t["prompt"], r, ["credit_card", "email", "iban", "phone"])

    def links(self) -> None:
        rng, c = self.rng, self.c["links"]
        for case in c["cases"]:
            hints = [v for k, v in c["hints"].items() if k in case["prompt"].lower()]
            valid = [u for u in c["valid_urls"] if any(w in u for w in hints)][: case["valid"]]
            while len(valid) < case["valid"]:
                valid.append(rng.choice([u for u in c["valid_urls"] if u not in valid]))
            bad = rng.sample(c["malformed_urls"], case["malformed"])
            urls = {f"v{i}": u for i, u in enumerate(valid)} | {
                f"m{i}": u for i, u in enumerate(bad)
            }
            labels: Event = {"expected": "malformed_links" if bad else "valid_links"}
            labels |= {"links_valid": valid, "links_malformed": bad}
            ev = dict(prompt=case["prompt"], response=case["response"].format(**urls))
            self.emit("links", labels, **ev, route="/support", task="chat")

    # ---- odd shapes and unknown fields ------------------------------------------------------
    def odd_shapes(self) -> None:
        c = self.c["odd_shapes"]
        for o in c["prompt_only"]:
            latency = self.rng.choice(c["latencies_ms"])
            self.emit("prompt_only", task="chat", route="/chat", **o, latency_ms=latency)
        for o in c["response_only"]:
            self.emit("response_only", **o, source="notification")

    def extra_fields(self) -> None:
        """Give some events fields the model does not define; they must survive decoding."""
        rng = self.rng
        kinds = {"chat", "rag_correct", "extraction_valid"}
        for ev in rng.sample([e for e in self.events if e["labels"]["kind"] in kinds], 10):
            extra: Event = rng.choice(  # every option is drawn, whichever is used
                [
                    {
                        "latency_ms": rng.randint(180, 4200),
                        "tokens": {
                            "prompt": rng.randint(20, 900),
                            "completion": rng.randint(5, 400),
                        },
                    },
                    {
                        "session_id": f"sess-{rng.randint(16**7, 16**8 - 1):08x}",
                        "user_feedback": rng.choice(["thumbs_up", "thumbs_down"]),
                    },
                    {
                        "trace_id": f"{rng.getrandbits(128):032x}",
                        "temperature": rng.choice([0.0, 0.2, 0.7]),
                    },
                    {
                        "client": {"app": "web", "version": "3.14.1"},
                        "locale": rng.choice(["en-US", "de-DE", "ja-JP"]),
                    },
                ]
            )
            ev.update(extra)
            ev["labels"]["extra_fields"] = sorted(extra)


def _topic(passage: str) -> str:
    return " ".join(passage.split(".")[0].split()[:6]).rstrip(",").lower()


def _fill(value: Any, **fields: str) -> Any:
    """``value`` with every string in it formatted with ``fields``."""
    if isinstance(value, str):
        return value.format(**fields)
    if isinstance(value, list):
        return [_fill(v, **fields) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, **fields) for k, v in value.items()}
    return value


def build(corpus: dict[str, Any]) -> tuple[list[str], list[Event], list[tuple[int, str]]]:
    """The lines of the stream, the events written and (line number, reason) per malformed line."""
    b = Builder(corpus, SEED)
    for section in (b.chat, b.rag, b.summarization, b.extraction, b.attacks, b.leakage):
        section()
    for section in (b.pii, b.links, b.odd_shapes, b.extra_fields, b.organic):
        section()
    rng, events = b.rng, b.events
    rng.shuffle(events)

    malformed = corpus["malformed"]
    total = len(events) + len(malformed)
    step = total / len(malformed)
    slots = {int(step * (i + 0.5)) + rng.randint(-8, 8) for i in range(len(malformed))}
    models = corpus["stream"]["models"]
    lines: list[str] = []
    written: list[Event] = []
    bad: list[tuple[int, str]] = []
    t = START
    it = iter(events)
    for pos in range(total):
        t += timedelta(milliseconds=rng.randint(1500, 18500))
        ts = t.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        seq = pos + 1
        eid = f"evt-{seq:06d}"
        if pos in slots:
            case = malformed[len(bad)]
            if "line" in case:
                lines.append(case["line"].format(eid=eid, ts=ts))
            else:
                lines.append(json.dumps(_fill(case["json"], eid=eid, ts=ts)))
            bad.append((seq, f"{case['reason']} ({case['what']})"))
            continue
        ev = next(it)
        ev["id"], ev["ts"] = eid, ts
        ev.setdefault("model", rng.choices(list(models), list(models.values()))[0])
        if not ev.setdefault("tenant", ""):
            ev["tenant"] = rng.choice(corpus["stream"]["tenants"])
        ordered = {k: ev[k] for k in FIELD_ORDER if k in ev}
        ordered.update({k: v for k, v in ev.items() if k not in ordered and k != "labels"})
        labels = ev["labels"]
        ordered["labels"] = {k: labels[k] for k in ("kind", "expected") if k in labels} | labels
        written.append(ordered)
        lines.append(json.dumps(ordered, ensure_ascii=False))
    return lines, written, bad


def summarize(written: list[Event], bad: list[tuple[int, str]]) -> str:
    """Markdown tables of counts, as printed and as written into the README."""
    kinds = Counter(e["labels"]["kind"] for e in written)
    tasks = Counter(e.get("task", "(none)") for e in written)
    features = {
        "with system_prompt": sum("system_prompt" in e for e in written),
        "with attack": sum("attack" in e for e in written),
        "with contexts": sum(bool(e.get("contexts")) for e in written),
        "with counterfactual_answers": sum(bool(e.get("counterfactual_answers")) for e in written),
        "with unknown extra fields": sum(
            any(k not in FIELD_ORDER and k != "labels" for k in e) for e in written
        ),
        "prompt only": sum("response" not in e for e in written),
        "response only": sum("prompt" not in e for e in written),
    }
    attacks = Counter(
        (e["attack"]["category"], e["labels"].get("outcome", "?")) for e in written if "attack" in e
    )
    out = [
        f"{len(written) + len(bad)} lines: {len(written)} events and {len(bad)} malformed records.",
        "",
        "| kind | events |",
        "| --- | ---: |",
        *(f"| `{k}` | {v} |" for k, v in sorted(kinds.items())),
        "",
        "| task | events |",
        "| --- | ---: |",
        *(f"| `{k}` | {v} |" for k, v in sorted(tasks.items())),
        "",
        "| attack category | refused (incl. partial and resisted) | complied (incl. leaks) |",
        "| --- | ---: | ---: |",
        *(
            f"| {cat} | {attacks[(cat, 'refused')]} | {attacks[(cat, 'complied')]} |"
            for cat in ("basic", "intermediate", "advanced")
        ),
        "",
        "| feature | events |",
        "| --- | ---: |",
        *(f"| {k} | {v} |" for k, v in features.items()),
        "",
        "| malformed line | expected reason |",
        "| ---: | --- |",
        *(f"| {seq} | {reason} |" for seq, reason in bad),
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where to write the stream")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the texts and tables to use")
    ap.add_argument("--readme", type=Path, default=README, help="README whose counts to refresh")
    ap.add_argument("--no-readme", action="store_true", help="only print the counts")
    args = ap.parse_args(argv)
    lines, written, bad = build(load_corpus(args.corpus))
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = summarize(written, bad)
    print(table)
    if args.no_readme or not args.readme.exists():
        return
    text = args.readme.read_text(encoding="utf-8")
    begin, end = "<!-- counts:begin -->", "<!-- counts:end -->"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        args.readme.write_text(f"{head}{begin}\n{table}\n{end}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main()
