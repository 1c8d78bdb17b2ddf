"""The premise check: does any shown turn tie the named person to the question's topic?"""

from __future__ import annotations

from datetime import UTC, datetime

from lamina.agents.common.query_analysis import QueryAnalysis
from lamina.agents.recall.premise import premise_found, unfounded_premise
from lamina.core.state import Candidate

WHEN = datetime(2023, 7, 23, tzinfo=UTC)
GINA = QueryAnalysis(persons=["Gina"])
JON = QueryAnalysis(persons=["Jon"])


def turn(text: str, speaker: str) -> Candidate:
    return Candidate(
        granularity="raw", id=text[:16], text=text, speaker=speaker, occurred_at=WHEN, score=1.0
    )


BANK = turn("Hey Gina, I had to shut down my bank account. I needed to do it for my biz.", "Jon")
SMALL_TALK = [
    turn("Keep going, you got this!", "Gina"),
    turn("Thanks! My store is doing great.", "Gina"),
    turn("Hey Jon, how's it going?", "Gina"),
]
BANK_Q = "Why did Gina shut down her bank account?"


def test_a_question_naming_the_wrong_person_fires() -> None:
    # Jon speaks of his own account in the first person; Gina is only addressed
    shown = [BANK, *SMALL_TALK]
    assert unfounded_premise(GINA, BANK_Q, "she needed to do it for her biz", shown) == "Gina"
    # asked about Jon, the same turns support the premise
    bank_q_jon = "Why did Jon shut down his bank account?"
    assert unfounded_premise(JON, bank_q_jon, "he needed to do it for his biz", shown) is None


def test_a_question_put_to_the_person_is_about_them() -> None:
    # "What are your pets' names?" asked by the other speaker is about the one asked
    asked = turn("Ah, they're adorable! What are your pets' names?", "Jon")
    answer = turn("Luna and Oliver, thanks for asking.", "Gina")
    q = "What are Gina's pets' names?"
    assert unfounded_premise(GINA, q, "Luna and Oliver", [asked, answer, *SMALL_TALK]) is None
    # praise said to her is about her too, even when it is the only turn on the topic
    praise = turn("Your lake sunrise painting is stunning, Gina!", "Jon")
    q_lake = "What lake sunrise painting did Gina make?"
    assert unfounded_premise(GINA, q_lake, "a lake sunrise", [praise, *SMALL_TALK]) is None
    told = turn("I made a lake sunrise painting last week, Gina!", "Jon")
    assert unfounded_premise(GINA, q_lake, "a lake sunrise", [told, *SMALL_TALK]) == "Gina"
    # and the person's own question about the listener is not about them
    mine = turn("That bowl is gorgeous! Did you make the black and white bowl?", "Gina")
    reply = turn("Yes, I made the black and white bowl in my pottery class.", "Jon")
    q2 = "Did Gina make the black and white bowl?"
    assert unfounded_premise(GINA, q2, "yes, in a pottery class", [mine, reply]) == "Gina"


def test_an_answer_from_the_persons_own_words_keeps_the_draft() -> None:
    # the topic's best match is the other speaker's question, but the answer is hers
    styles = turn("Dance is my go-to for stress relief. What are your fave dance styles?", "Jon")
    # second person: Jon's question is about Gina, so the premise holds at once
    q = "What is Gina's favorite style of dance?"
    own = turn("Contemporary is my favorite, so expressive and graceful.", "Gina")
    assert unfounded_premise(GINA, q, "contemporary", [styles, own]) is None
    # topic about someone else, answer grounded in the person's own turn
    jon_story = turn("I won the regional dance contest trophy last year!", "Jon")
    hers = turn("My trophy shelf is full of dance medals.", "Gina")
    q3 = "What dance contest trophy did Gina win?"
    assert unfounded_premise(GINA, q3, "dance medals", [jon_story, hers]) is None


def test_the_check_does_not_apply_without_a_clear_topic_or_one_person() -> None:
    shown = [BANK, *SMALL_TALK]
    # two persons, or none
    both = QueryAnalysis(persons=["Gina", "Jon"])
    assert unfounded_premise(both, BANK_Q, "for her business", shown) is None
    assert unfounded_premise(QueryAnalysis(), BANK_Q, "for her business", shown) is None
    # no turn shares two content words with the question
    assert unfounded_premise(GINA, "Why did Gina shut it?", "for her business", shown) is None
    # the answer shares no word with any turn (a bare date, "yes")
    assert unfounded_premise(GINA, BANK_Q, "20 May 2023", shown) is None
    # time words in the question are a filter, not its topic: "November" alone would
    # make Jon's dated turn the topic's best match
    dated = turn("I posted a new script on 9 November 2022. It took ages!", "Jon")
    q = "What gaming video did Gina post on 9 November 2022?"
    assert unfounded_premise(GINA, q, "a new script", [dated, *SMALL_TALK]) is None
    q_undated = "What gaming video script did Gina post?"
    assert unfounded_premise(GINA, q_undated, "a new script", [dated, *SMALL_TALK]) == "Gina"


def test_derived_memories_and_empty_contexts_never_fire() -> None:
    fact = Candidate(
        granularity="fact", id="f1", text="Jon shut down his bank account for his business",
        occurred_at=WHEN, score=1.0,
    )  # fmt: skip
    assert unfounded_premise(GINA, BANK_Q, "for his business", [fact]) is None
    assert unfounded_premise(GINA, BANK_Q, "for his business", []) is None


def test_the_persons_own_words_to_someone_else_are_about_the_other() -> None:
    # Caroline cheers Melanie's race: her sentence names Melanie and has no "I"
    caroline = QueryAnalysis(persons=["Caroline"])
    cheer = turn("That charity race sounds great, Melanie!", "Caroline")
    ran = turn("I ran the charity race, it was great!", "Melanie")
    q = "How was Caroline's charity race?"
    assert unfounded_premise(caroline, q, "it sounds great", [cheer, ran]) == "Caroline"
    # with an "I" the sentence is her own again
    mine = turn("I loved my charity race, it sounds great, Melanie!", "Caroline")
    assert unfounded_premise(caroline, q, "it sounds great", [mine, ran]) is None


def test_a_shared_photos_caption_counts_as_its_senders_words() -> None:
    photo = Candidate(
        granularity="raw", id="p1", text="Here's what I use to stay on track!", speaker="Jon",
        occurred_at=WHEN, score=1.0, media_caption="a clipboard with a notepad attached",
    )  # fmt: skip
    q = "How does Gina use the clipboard with a notepad?"
    assert unfounded_premise(GINA, q, "to stay on track", [photo, *SMALL_TALK]) == "Gina"
    assert unfounded_premise(JON, q.replace("Gina", "Jon"), "to stay on track", [photo]) is None


def test_a_doubted_premise_needs_a_turn_on_the_topic_about_the_person() -> None:
    shown = [BANK, *SMALL_TALK]
    assert not premise_found(GINA, BANK_Q, shown)
    assert premise_found(JON, "Why did Jon shut down his bank account?", shown)
    hers = turn("I shut down my bank account last week.", "Gina")
    assert premise_found(GINA, BANK_Q, [BANK, hers])
    assert premise_found(QueryAnalysis(), BANK_Q, shown)  # no single person: no doubt
    assert not premise_found(GINA, BANK_Q, SMALL_TALK)  # nothing on the topic at all


def test_an_echo_of_the_answer_on_another_topic_does_not_tie_the_person() -> None:
    # Mel said it about the race; Carol only echoes the answer's words, not the race
    said = turn(
        "The charity race was so rewarding. It made me realize self-care is important.", "Mel"
    )
    echo = turn(
        "Taking care of ourselves is so important. Great that you prioritize self-care!", "Carol"
    )
    carol = QueryAnalysis(persons=["Carol"])
    q = "What did Carol realize after her charity race?"
    shown = [said, echo, *SMALL_TALK]
    assert unfounded_premise(carol, q, "self-care is important", shown) == "Carol"
    # asked of Mel, whose words they are, the premise holds
    mel = QueryAnalysis(persons=["Mel"])
    q_mel = "What did Mel realize after her charity race?"
    assert unfounded_premise(mel, q_mel, "self-care is important", shown) is None


def test_the_persons_own_question_about_others_does_not_tie_them() -> None:
    # Mel's kids had the accident; Carol only asks about it
    told = turn("My son got into an accident last week. The kids were scared.", "Mel")
    asked = turn("The kids look so cute, Mel! How did they handle the accident?", "Carol")
    carol = QueryAnalysis(persons=["Carol"])
    q = "How did Carol's children handle the accident?"
    shown = [told, asked, *SMALL_TALK]
    assert unfounded_premise(carol, q, "they were scared", shown) == "Carol"
    # asking about her own thing, with an "I", still ties her to it
    own = turn("Should I tell you how my kids handled the accident?", "Carol")
    assert unfounded_premise(carol, q, "they were scared", [told, own, *SMALL_TALK]) is None


def test_in_a_chat_of_two_the_other_speakers_question_is_put_to_the_person() -> None:
    # "What are the pets' names?" has no "you", but only Gina can be asked it
    asked = turn("Ah, the pets are adorable! What are the pets' names?", "Jon")
    q = "What are Gina's pets' names?"
    assert unfounded_premise(GINA, q, "their names", [asked, *SMALL_TALK]) is None
    # with a third speaker, whom it was put to is not known: the topic is not hers
    third = turn("Morning all!", "Ana")
    assert unfounded_premise(GINA, q, "their names", [asked, third, *SMALL_TALK]) == "Gina"
    # a question with an "I" in it is the asker's own
    own = turn("They're adorable! What should I name my pets?", "Jon")
    assert unfounded_premise(GINA, q, "pet names", [own, *SMALL_TALK]) == "Gina"
