"""/model: switch the model, and how hard it works.

`/model <name>` sets it at once. `/model` opens a picker: each model with its id, its
price and what it is for, the current one last ("keep"). Under the list, the effort
level of the highlighted model when it takes one (Claude 5 and later: the request's
`output_config.effort`); ← → change it. Picking a model applies both; Esc neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from wisp.tui.dialog import Picker

if TYPE_CHECKING:
    from wisp.tui.app import TuiApp

MODEL_CHOICES = ("sonnet", "opus", "haiku")
MODEL_NOTES = {"sonnet": "balanced, for everyday work", "opus": "the most capable, for hard tasks",
               "haiku": "the fastest and cheapest, for simple tasks"}
EFFORT_NOTES = {"low": "quickest answers, least thinking", "medium": "the default balance",
                "high": "more thorough, slower", "xhigh": "for hard problems",
                "max": "as much as the model will spend"}


class ModelPicker(Picker):
    """`models`: the model id each choice stands for (the effort line is about it)."""

    def __init__(self, choices: list[str], models: list[str], effort: str) -> None:
        from wisp.models.shape import EFFORTS

        super().__init__(Text("Choose a model", style="bold"), choices)
        self.models = models
        self.effort = EFFORTS.index(effort) if effort in EFFORTS else 1
        self.levels = EFFORTS

    def adjust(self, step: int) -> None:
        if takes_effort(self.models[self.selected]):
            self.effort = max(0, min(len(self.levels) - 1, self.effort + step))

    @property
    def level(self) -> str:
        return self.levels[self.effort]

    def choices_text(self, one_line: bool = False) -> RenderableType:
        line = Text()
        if takes_effort(self.models[self.selected]):
            line.append("Effort (← →):", style="bold")
            for i, level in enumerate(self.levels):
                chosen = i == self.effort  # bracketed: seen without colours too
                line.append(f"[{level}]" if chosen else f" {level} ",
                            style="reverse bold" if chosen else "dim")
            line.append(f"  {EFFORT_NOTES.get(self.level, '')}", style="dim")
        else:
            line.append("Effort: this model has no effort levels", style="dim")
        line.no_wrap, line.overflow = True, "ellipsis"
        choices = super().choices_text(one_line)
        if isinstance(choices, Text):  # a choice a line, cut to the width, never wrapped
            choices.no_wrap, choices.overflow = True, "ellipsis"
        return Group(choices, line)


def takes_effort(model: str) -> bool:
    from wisp.models.shape import generation

    made = generation(model)
    return made is not None and made >= 5


async def choose_model(app: TuiApp, args: str) -> None:
    runtime = app.runtime
    if args:
        app.view.print_text(f"Model set to {runtime.set_model(args)}")
        return
    from wisp.models import catalog

    current = runtime.session.model
    models = [*(catalog.resolve_model(alias, app.env) for alias in MODEL_CHOICES), current]
    choices = [*(model_choice(alias, app.env) for alias in MODEL_CHOICES), f"keep {current}"]
    picker = ModelPicker(choices, models, runtime.effort)
    choice = await app.show_dialog(picker)
    if choice is None:
        return
    keep = choice == len(choices) - 1
    model = current if keep else runtime.set_model(MODEL_CHOICES[choice])
    said = f"Model kept: {model}" if keep else f"Model set to {model}"
    if takes_effort(model) and picker.level != runtime.effort:
        runtime.set_effort(picker.level)
        said += f" · effort {picker.level}"
    app.view.print_text(said)


def model_choice(alias: str, env: Mapping[str, str]) -> str:
    """"sonnet · claude-sonnet-5-5 · $2/$10 per Mtok · what it is for"."""
    from wisp.models import catalog

    model = catalog.resolve_model(alias, env)
    price = catalog.price_for(model)
    cost = f" · ${price.input:g}/${price.output:g} per Mtok" if price else ""
    return f"{alias} · {model}{cost} · {MODEL_NOTES.get(alias, '')}".rstrip(" ·")
