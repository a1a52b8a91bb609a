"""Dataset statistics (the paper's Appendix A table, plus audio durations) and their plot."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Iterable

from .schema import DEPTH_BINS, INTERRUPTION_TYPES, EvalItem
from .wide import WideConversation


def dataset_statistics(conversations: list[WideConversation], items: list[EvalItem], *, durations: bool = True) -> dict:
    messages = [2 * len(c.turns) for c in conversations]
    types = Counter(item.interruption_type for item in items)
    depth = Counter(item.depth_bin for item in items)
    domains = Counter(c.domain for c in conversations)
    points_per_domain = Counter(item.domain for item in items)
    stats = {
        "conversations": len(conversations),
        "domains": len(domains),
        "interruption_points": len(items),
        "messages_per_conversation": {
            "mean": round(mean(messages), 1) if messages else 0,
            "min": min(messages, default=0),
            "max": max(messages, default=0),
        },
        "interruption_types": {kind: types.get(kind, 0) for kind in INTERRUPTION_TYPES},
        "depth_bins": {f"{low}-{high}": depth.get(f"{low}-{high}", 0) for low, high in DEPTH_BINS},
        "per_domain": {
            name: {"conversations": domains[name], "interruption_points": points_per_domain.get(name, 0)}
            for name in sorted(domains)
        },
    }
    judged = [item for item in items if item.baseline_rq]
    if judged:
        def rate(group):
            return round(sum(all(i.baseline_rq) for i in group) / len(group), 3) if group else None

        stats["baseline_rq_pass_rate"] = {
            "overall": rate(judged), "n": len(judged),
            "per_type": {kind: rate([i for i in judged if i.interruption_type == kind]) for kind in INTERRUPTION_TYPES},
        }
    if durations:
        user = [t.user_audio.duration() for c in conversations for t in c.turns if t.user_audio is not None]
        interruption = [i.interruption.audio.duration() for i in items if i.interruption.audio is not None]
        assistant = [t.assistant_audio.duration() for c in conversations for t in c.turns if t.assistant_audio is not None]
        stats["audio_seconds"] = {
            "user_turns_total": round(sum(user), 1),
            "user_turn_mean": round(mean(user), 2) if user else None,
            "interruption_mean": round(mean(interruption), 2) if interruption else None,
            "assistant_delivered_total": round(sum(assistant), 1),
            "user_clips": len(user),
            "assistant_clips": len(assistant),
        }
    return stats


def _percent(count: int, total: int) -> str:
    return f"{count} ({100 * count / total:.1f}%)" if total else str(count)


def statistics_markdown(stats: dict) -> str:
    total = stats["interruption_points"]
    lines = ["| Statistic | Value |", "|---|---|"]
    m = stats["messages_per_conversation"]
    lines += [
        f"| Conversations | {stats['conversations']} |",
        f"| Domains | {stats['domains']} |",
        f"| Interruption points | {total} |",
        f"| Messages per conversation (mean / min / max) | {m['mean']} / {m['min']} / {m['max']} |",
    ]
    lines += [f"| Type: {kind} | {_percent(n, total)} |" for kind, n in stats["interruption_types"].items()]
    lines += [f"| Depth {bin_}: | {_percent(n, total)} |" for bin_, n in stats["depth_bins"].items()]
    audio = stats.get("audio_seconds")
    if audio:
        lines += [
            f"| User audio, total (s) | {audio['user_turns_total']} ({audio['user_clips']} clips) |",
            f"| User turn, mean (s) | {audio['user_turn_mean']} |",
            f"| Interruption clip, mean (s) | {audio['interruption_mean']} |",
            f"| Assistant delivered audio, total (s) | {audio['assistant_delivered_total']} ({audio['assistant_clips']} clips) |",
        ]
    baseline = stats.get("baseline_rq_pass_rate")
    if baseline:
        per_type = ", ".join(f"{kind} {value:.2f}" for kind, value in baseline["per_type"].items() if value is not None)
        lines.append(f"| Baseline RQ pass rate (all criteria met) | {baseline['overall']:.3f} over {baseline['n']} "
                     f"points; {per_type} |")
    sid = stats.get("sid")
    if sid:
        lines.append(f"| SID-style clips (positives / negatives / noise) | {sid['clips']} "
                     f"({sid['positives']} / {sid['negatives']} / {sid['noise']}) |")
    duplex = stats.get("duplex")
    if duplex:
        lines.append(f"| Duplex recordings (minutes; yields / talk-overs / fillers; mean stop latency; under a noise "
                     f"floor) | {duplex['recordings']} ({duplex['minutes']} min; {duplex['interruptions']} / "
                     f"{duplex.get('talk_overs', 0)} / {duplex['fillers']}; {duplex['stop_latency_mean_s']} s; "
                     f"{duplex.get('noisy_recordings', 0)}) |")
    for name, bench in (stats.get("conversation_bench") or {}).items():
        lines.append(f"| ConversationBench-style `{name}` (turns / with expected calls / tools / knowledge-base "
                     f"lines) | {bench['turns']} / {bench['tool_turns']} / {bench['tools']} / "
                     f"{bench['knowledge_base_lines']} |")
    lines += ["", "| Domain | Conversations | Interruption points |", "|---|---|---|"]
    lines += [f"| {name} | {d['conversations']} | {d['interruption_points']} |" for name, d in stats["per_domain"].items()]
    return "\n".join(lines)


def plot_statistics(stats: dict, path: Path) -> Path:
    """Types, depth bins and domains side by side: the shape of the data at a glance."""
    from .plotting import pyplot, save_figure

    plt = pyplot()

    panels: Iterable[tuple[str, dict]] = (
        ("Interruption type", stats["interruption_types"]),
        ("Depth (user-turn index)", stats["depth_bins"]),
        ("Domain (interruption points)", {k: v["interruption_points"] for k, v in stats["per_domain"].items()}),
    )
    figure, axes = plt.subplots(1, 3, figsize=(14, 4), constrained_layout=True)
    for axis, (title, counts) in zip(axes, panels):
        axis.bar(list(counts), list(counts.values()), color="#4c72b0")
        axis.set_title(title)
        axis.set_ylabel("count")
        axis.tick_params(axis="x", rotation=45)
        for label in axis.get_xticklabels():
            label.set_horizontalalignment("right")
    figure.suptitle(f"IHBench dev set: {stats['interruption_points']} interruption points in {stats['conversations']} conversations")
    return save_figure(figure, path, dpi=100, metadata={"Software": None})
