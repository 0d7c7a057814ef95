"""The official SciBench prompts and message layouts (``eval/*.py``, ``prompt/prompt_scai.py``).

The texts are reproduced character for character, including their leading and trailing newlines,
the three spaces after "Problem k." and the missing spaces of the two-stage chain of thought.
Messages are plain (role, text) pairs so that the layouts can be tested without Inspect.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from scievals.scibench.dataset import Record
from scievals.scibench.units import official_unit

SYS_CAL_BOX2 = (
    "\nPlease provide a clear and step-by-step solution for a scientific problem in the "
    "categories of Chemistry, Physics, or Mathematics. The problem will specify the unit "
    "of measurement, which should not be included in the answer. Express the final answer "
    "as a decimal number with three digits after the decimal point. Conclude the answer by "
    'stating "The answer is therefore \\boxed{[ANSWER]}."\n'
)
SYS_TOOL_PYTHON = (
    "\nPlease provide a clear and step-by-step solution for a scientific problem in the "
    "categories of Chemistry, Physics, or Mathematics. The problem will specify the unit "
    "of measurement. Please translate the solution steps into Python code and encase the "
    "Python code within triple backticks for clarity.\n"
)
SYS_TOOL_WOLFRAM = (
    "\nPlease provide a clear and step-by-step solution for a scientific problem in the "
    "categories of Chemistry, Physics, or Mathematics. The problem will specify the unit "
    "of measurement. Please translate the solution steps into Wolfram code and encase the "
    "Wolfram Language code within triple backticks for clarity.\n"
)
SYS_ANA = (
    "\nExamine the given problem, the correct solution, and the model's solution. Identify the "
    "reason for the error in the model's solution based on the following 10 categories:\n"
    "1. Logical Decomposition and Analysis Skills: This ability involves decomposing the problem "
    "into smaller, manageable parts, and understanding the relationships between these parts.\n"
    "2. Identification of Assumptions: This skill involves the AI's ability to recognize relevant "
    "and necessary assumptions in the problem. \n"
    "3. Spatial Perception: This is important for understanding problems in areas such as physics "
    "and chemistry, where you need to visualize molecules, forces, fields, etc.\n"
    "4. Causal Reasoning: This is the ability to understand cause and effect relationships.\n"
    "5. Problem Deduction Skills: This pertains to the ability to infer and deduce potential "
    "solutions or underlying principles from the given information in a problem.\n"
    "6. Abstract Reasoning: This skill involves the ability to understand complex concepts that "
    "can't be perceived physically, and to recognize patterns or relationships beyond concrete "
    "examples.\n"
    "7. Scientific Literacy:  This skill involves a comprehensive understanding of key scientific "
    "principles, terminology, and methodologies across a range of disciplines.\n"
    "8. Code Conversion Skills: This denotes the ability to accurately translate solution steps "
    "into different programming languages, like Python or Wolfram, without syntax errors.\n"
    "9. Logical Reasoning: This is the ability to make a reasoned argument and to identify "
    "fallacies or inconsistencies in an argument or set of data.\n"
    "10. Calculation Skills: This involves the ability to accurately carry out mathematical "
    "operations and computations. \n"
    "Conclude your final error reason category number within \\boxed{}.\n"
)
SKILLS = (
    "Logical Decomposition and Analysis Skills",
    "Identification of Assumptions",
    "Spatial Perception",
    "Causal Reasoning",
    "Problem Deduction Skills",
    "Abstract Reasoning",
    "Scientific Literacy",
    "Code Conversion Skills",
    "Logical Reasoning",
    "Calculation Skills",
)

# The paper-era code loaded 5 solution-pool records for the tool settings and showed 4 (thermo 3);
# main loads 3 and then indexes a fourth (IndexError), so the paper-era layout is the only one.
TOOL_LOADED = 5


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


def to_chat(messages: list[Message]) -> list[ChatMessage]:
    """The same messages as Inspect chat messages."""
    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    return [kinds[m.role](content=m.content) for m in messages]


def unit_sentence(problem_text: str, unit: str) -> str:
    """The official problem line: text + " The unit of the answer is " + U + "."."""
    return problem_text + " The unit of the answer is " + unit + "."


def test_text(record: Record) -> str:
    """A test problem with its shown unit (the 10^k stripped where the official code strips it)."""
    return unit_sentence(record.problem_text, official_unit(record.unit).shown)


def example_text(record: Record) -> str:
    """A solution-pool example: always the raw unit, 10^k included."""
    return unit_sentence(record.problem_text, record.unit)


def _system(system: str) -> list[Message]:
    return [Message("system", system)] if system else []


def zero_messages(problem: str, system: str = SYS_CAL_BOX2) -> list[Message]:
    """zero (with the system prompt) and zero_nosys (``system=""``)."""
    return [*_system(system), Message("user", "Q: " + problem + "\n" + "A: The answer is")]


def zero_cot_stage1(problem: str) -> list[Message]:
    return [
        *_system(SYS_CAL_BOX2),
        Message("user", "Q: " + problem + "\nA: Let's think step by step."),
    ]


def zero_cot_stage2(problem: str, stage1_reply: str) -> list[Message]:
    """One user turn: stage-1 text + stage-1 reply + "Therefore, the answer is", no separators."""
    text = (
        "Q: "
        + problem
        + "\nA: Let's think step by step."
        + stage1_reply
        + "Therefore, the answer is"
    )
    return [*_system(SYS_CAL_BOX2), Message("user", text)]


def few_messages(problem: str, examples: list[Record], cot: bool) -> list[Message]:
    """few / few_cot: alternating example turns, then "Problem N+1.   " + the test problem."""
    messages = _system(SYS_CAL_BOX2)
    for k, example in enumerate(examples, start=1):
        answer = "The answer is \\boxed{" + example.answer_number + "} " + example.unit
        if cot:
            answer = f"Explanation for Problem {k}:   " + (example.solution or "") + "\n" + answer
        messages += [
            Message("user", f"Problem {k}.   " + example_text(example) + "\n"),
            Message("assistant", answer),
        ]
    return [*messages, Message("user", f"Problem {len(examples) + 1}.   " + problem + "\n")]


def tool_shots(book: str) -> int:
    """Examples shown in the tool settings: 4, but 3 for thermo."""
    return 3 if book == "thermo" else 4


def tool_messages(
    problem: str, examples: list[Record], codes: list[str], tool: str, loaded: int = TOOL_LOADED
) -> list[Message]:
    """python / wolfram: worked examples with their code; the test is numbered ``loaded + 1``.

    The official loop shows ``len(codes)`` examples but numbers the test after all ``loaded``
    records it read, so the paper-era test turn is "Problem 6." after 4 (or 3) examples.
    """
    messages = _system(SYS_TOOL_PYTHON if tool == "python" else SYS_TOOL_WOLFRAM)
    for k, (example, code) in enumerate(zip(examples, codes, strict=True), start=1):
        answer = (
            f"Explanation for Problem {k}:   "
            + (example.solution or "")
            + "\n"
            + f"{tool} language for Problem {k}: ```"
            + code
            + "``` \n The answer is \\boxed{"
            + example.answer_number
            + "} "
            + example.unit
        )
        messages += [
            Message("user", f"Problem {k}.   " + example_text(example) + "\n"),
            Message("assistant", answer),
        ]
    return [*messages, Message("user", f"Problem {loaded + 1}.   " + problem + "\n")]


def error_analysis_messages(
    problem: str, solution: str, model_solution: str, tool: str | None = None, tool_answer: str = ""
) -> list[Message]:
    """The verifier's turn (``ana_error.py``); tool replies are cut after their first code block."""
    text = "The question is " + problem + "\n" + "The correct solution is " + solution + "\n"
    if tool in ("python", "wolfram"):
        start = model_solution.find("```")
        end = model_solution[start + 3 :].find("```")
        text += (
            "The model solution is "
            + model_solution[: end + start + 6]
            + "\n"
            + "The translated program generates the answer as "
            + tool_answer
            + ", which is treated as model's output answer."
        )
    else:
        text += "The model solution is " + model_solution
    return [Message("system", SYS_ANA), Message("user", text)]
