"""The owner of a fact from its source turn's grammar, and the support check."""

from __future__ import annotations

import pytest

from lamina.agents.ingest.evidence.support import SUPPORT_THRESHOLD, support_ratio, supported
from lamina.agents.ingest.ownership.grammar import (
    addressee,
    decide_owner,
    grammar_owner,
    speech_act,
)
from lamina.agents.ingest.ownership.named import person_named, pet_keeper
from lamina.agents.ingest.ownership.owner_check import restate

PEOPLE = ["Maya", "Theo"]


@pytest.mark.parametrize(
    ("statement", "speaker", "turn", "model", "owner", "check"),
    [
        # "you" in the clause of the fact's words: the one addressed
        (
            "Maya's lease signing is next Friday",
            "Maya",
            "Congratulations! When do you sign the lease for the Alder Street shop?",
            "Maya",
            "Theo",
            "corrected",
        ),
        (
            "Maya will water her plants while she is flat-hunting",
            "Maya",
            "My front door code is 4711, so you can water my plants while I'm flat-hunting.",
            "Maya",
            "Theo",
            "corrected",
        ),
        # first person: the speaker, and the model agreed
        ("Theo signs the lease next Friday", "Theo", "I sign the lease next Friday.", "Theo",
         "Theo", "agreed"),
        ("Maya is moving to Lisbon", "Maya", "I'm moving to Lisbon in September.", "Theo",
         "Maya", "corrected"),
        # a named person in the clause
        ("Theo opened a bakery", "Maya", "Theo opened a bakery last week!", "Maya", "Theo",
         "corrected"),
        # a third person: someone other than the two speakers; the model's name stands
        ("Ana got a new job", "Maya", "My sister Ana? She got a new job.", "Ana", "Ana", "agreed"),
        # nothing to go by: the model's owner stays, flagged
        ("The bakery opens in May", "Theo", "Bakery opens in May.", "Theo", "Theo", "undecided"),
    ],
)  # fmt: skip
def test_the_source_turns_grammar_decides_the_owner(
    statement: str, speaker: str, turn: str, model: str, owner: str, check: str
) -> None:
    other = addressee(speaker, [], PEOPLE)
    verdict = decide_owner(model, statement, turn, speaker, other, PEOPLE)
    assert (verdict.owner, verdict.check) == (owner, check)


def test_a_name_said_to_someone_is_not_the_subject() -> None:
    # "Theo," is a vocative: the clause's subject is "I", the speaker
    assert grammar_owner("Maya baked bread", "Theo, I baked bread today", "Maya", "Theo",
                         PEOPLE) == "Maya"  # fmt: skip


def test_a_role_label_speaker_keeps_the_models_name_for_them() -> None:
    verdict = decide_owner("Alice", "Alice bakes bread", "we baked bread", "user", None, ["user"])
    assert (verdict.owner, verdict.check) == ("Alice", "agreed")


def test_the_addressee_is_the_nearest_other_speaker() -> None:
    assert addressee("Maya", ["Maya", "Theo", "Lena"], ["Maya", "Theo", "Lena"]) == "Theo"
    assert addressee("Maya", [], ["Maya", "Theo"]) == "Theo"
    assert addressee("Maya", [], ["Maya", "Theo", "Lena"]) is None  # nobody to choose


def test_restate_replaces_only_a_leading_owner_name() -> None:
    assert restate("Maya's lease signing", "Maya", "Theo") == "Theo's lease signing"
    assert restate("Maya will water the plants", "Maya", "Theo") == "Theo will water the plants"
    assert restate("The lease is Maya's", "Maya", "Theo") == "The lease is Maya's"
    # the model named the husband; the turn ("my husband went keto") is Hana's
    assert restate("Joe, Hana's husband, went keto.", "Joe", "Hana") == "Hana's husband went keto."
    assert restate("Joe, a neighbour, went keto.", "Joe", "Hana") == "Hana, a neighbour, went keto."


def test_support_counts_the_facts_content_words_in_its_sources() -> None:
    turn = "Porto is lovely. I'll visit once the bakery runs itself."
    assert supported("Theo will visit Porto", [turn], PEOPLE)
    assert not supported("Theo is moving to Berlin for a new job", [turn], PEOPLE)
    assert support_ratio("Theo", [turn], PEOPLE) == 1.0  # nothing but a name to check
    assert 0 < SUPPORT_THRESHOLD < 1


@pytest.mark.parametrize(
    ("turn", "statement"),
    [
        ("Been busy. Just started aerial yoga, it's great!", "Theo started aerial yoga."),
        ("Went to a pottery class yesterday, loved it.", "Theo went to a pottery class."),
        ("Finally finished the quilt for my niece.", "Theo finished a quilt."),
    ],
)  # fmt: skip
def test_a_clause_that_drops_its_i_is_the_speakers(turn: str, statement: str) -> None:
    verdict = decide_owner("Theo", statement, turn, "Maya", "Theo", ["Maya", "Theo"])
    assert (verdict.owner, verdict.check) == ("Maya", "corrected")


def test_a_clause_with_its_own_subject_keeps_it() -> None:
    turn = "Thanks! You just started doing aerial yoga, right?"
    assert (
        grammar_owner("Maya started aerial yoga.", turn, "Theo", "Maya", ["Maya", "Theo"]) == "Maya"
    )


def test_a_named_relative_or_friend_is_the_owner_of_their_news() -> None:
    turn = "My friend Carla just got a new job at the Harbor Hotel!"
    verdict = decide_owner("Ana", "Ana got a new job at the Harbor Hotel.", turn, "Ana", "Leo",
                           ["Ana", "Leo"])  # fmt: skip
    assert (verdict.owner, verdict.check) == ("Carla", "corrected")
    # a place is not a person: "I moved to Paris and got a job" stays the speaker's
    assert grammar_owner("Ana got a job.", "I moved to Paris and got a job.", "Ana", "Leo",
                         ["Ana", "Leo"]) == "Ana"  # fmt: skip


@pytest.mark.parametrize(
    ("statement", "turn", "speaker"),
    [
        # whoever speaks the turn does the asking, thanking or suggesting
        ("Maya asked Theo about his family.", "What do you enjoy doing with your family?", "Theo"),
        ("Theo thanked Maya for her help.", "Thanks, Theo! You're super helpful.", "Maya"),
        ("Maya kindly suggested a hike to Theo.", "You should try the coast trail!", "Theo"),
    ],
)  # fmt: skip
def test_what_someone_said_is_the_speakers_act(statement: str, turn: str, speaker: str) -> None:
    other = "Theo" if speaker == "Maya" else "Maya"
    verdict = decide_owner(other, statement, turn, speaker, other, PEOPLE)
    assert (verdict.owner, verdict.check) == (speaker, "corrected")
    # a verb that is not one of saying leaves the clause grammar in charge
    assert not speech_act("Maya visited Theo in Porto.", PEOPLE)
    assert not speech_act("Ana asked Maya for a loan.", PEOPLE)  # Ana is not a speaker here


def test_a_list_after_a_comma_keeps_the_clause_subject() -> None:
    # the vocative "Maya!" and the question to her must not outvote "We love ..."
    turn = "Thanks, Maya! We love climbing, sliding, and playing games. What do you enjoy doing?"
    statement = "Maya enjoys climbing, sliding, and playing games with her family."
    verdict = decide_owner("Maya", statement, turn, "Theo", "Maya", PEOPLE)
    assert (verdict.owner, verdict.check) == ("Theo", "corrected")


@pytest.mark.parametrize(
    ("turn", "owner"),
    [
        # no clause subject before the fact's words: their sentence's pronouns decide
        ("Seeing the cuts hit our neighbours made me start a food drive.", "Theo"),
        ("Wow. So your food drive starts on Monday?", "Maya"),
        ("Yep, let's keep the food drive going all winter!", "Theo"),
    ],
)  # fmt: skip
def test_a_sentences_pronouns_decide_when_no_clause_names_a_subject(turn: str, owner: str) -> None:
    found = grammar_owner("Someone started a food drive.", turn, "Theo", "Maya", PEOPLE)
    assert found == owner


@pytest.mark.parametrize(
    ("turn", "owner"),
    [
        # a yes/no question asks; the speaker's own clause says who cooks
        ("I've been getting into cooking more lately. Do you enjoy cooking?", "Theo"),
        ("Do you enjoy cooking? I have been getting into cooking lately.", "Theo"),
        ("I keep cooking at home. Is there anything you enjoy cooking?", "Theo"),
        # a request names who will do it
        ("Could you enjoy cooking for me while I travel?", "Maya"),
        # a question that takes it as given still speaks of the addressee
        ("What made you start cooking?", "Maya"),
        # "you" that states, not asks
        ("You enjoy cooking so much, and I can tell.", "Maya"),
    ],
)  # fmt: skip
def test_a_yes_no_question_says_nothing_of_the_one_asked(turn: str, owner: str) -> None:
    found = grammar_owner("Maya is enjoying cooking.", turn, "Theo", "Maya", PEOPLE)
    assert found == owner


def test_an_interjection_before_a_dropped_i_is_read_past() -> None:
    turn = "Nah, didn't get to hang with them after the show. It's a dream to see your favorites!"
    found = grammar_owner("Maya didn't hang out after the show.", turn, "Theo", "Maya", PEOPLE)
    assert found == "Theo"


def test_a_sentence_with_both_persons_decides_nothing() -> None:
    turn = "Your food drive made me so happy."
    assert grammar_owner("Someone started a food drive.", turn, "Theo", "Maya", PEOPLE) is None


@pytest.mark.parametrize(
    ("name", "turn", "named"),
    [
        ("Carla", "My friend Carla just got a job at the Harbor Hotel!", True),
        ("Joe", "Joe went keto last month. I did not.", True),
        # a word the model took for a name: a verb form, a number word
        ("Renting", "I'm still renting that little house in Leeds.", False),
        ("Thirty", "Thirty years as a mechanic at Dale's Garage.", False),
        # a chat turn's interjection
        ("Great", "Great idea! that should get some more eyes on it.", False),
        ("Wow", "Wow, that's amazing news!", False),
        # a pet's name: the pet's news is its owner's
        ("Rocket", "We adopted a greyhound and named him Rocket.", False),
        ("Pepper", "My kitten is called Pepper and she is pure chaos.", False),
        ("Clover", "My rabbit Clover lives in a hutch in the garden.", False),
        # only said to someone
        ("Maya", "Thanks, Maya!", False),
    ],
)  # fmt: skip
def test_a_third_person_owner_must_be_a_person_the_turn_names(
    name: str, turn: str, named: bool
) -> None:
    assert person_named(name, turn) is named


def test_a_pets_fact_goes_to_its_owner_unrestated() -> None:
    turn = "We adopted a greyhound and named him Rocket."
    verdict = decide_owner("Rocket", "Rocket is her new pet.", turn, "Maya", "Theo", PEOPLE)
    assert (verdict.owner, verdict.check) == ("Maya", "corrected")


def test_a_pet_is_kept_by_whoever_the_turn_says() -> None:
    assert pet_keeper("Clover", "My rabbit Clover lives in a hutch.", "Noah", "Ann") == "Noah"
    assert pet_keeper("Rex", "How is your dog Rex?", "Ann", "Noah") == "Noah"
    assert pet_keeper("Rocket", "We named him Rocket.", "Maya", "Theo") == "Maya"
    assert pet_keeper("Carla", "My friend Carla got a job.", "Maya", "Theo") is None
    assert pet_keeper("Pepper", "My kitten is called Pepper.", "Lily", "Ben") == "Lily"
    assert pet_keeper("Carla", "My friend is called Carla.", "Lily", "Ben") is None


def test_an_owner_that_is_no_person_goes_to_the_speaker() -> None:
    turn = "Thirty years as a mechanic at Dale's Garage and counting."
    verdict = decide_owner("Thirty", turn, turn, "Walter", "Sue", ["Walter", "Sue"])
    assert (verdict.owner, verdict.check) == ("Walter", "corrected")
    # a speaker known only by a role keeps the model's name for them
    verdict = decide_owner("Alice", "Alice's bakery opens in May.", "Bakery opens in May.",
                           "user", None, ["user"])  # fmt: skip
    assert verdict.owner == "Alice"


def test_a_word_that_only_opens_the_turn_is_no_owner() -> None:
    """ "Great idea!" is no one; with no subject and no pronoun, the fact is the speaker's."""
    turn = "Great idea! that should hopefully get some more eyes on it. Keep up the hard work!"
    verdict = decide_owner("Great", turn, turn, "Nate", "Joanna", ["Joanna", "Nate"])
    assert (verdict.owner, verdict.check) == ("Nate", "corrected")


def test_a_capital_that_only_opens_a_sentence_does_not_outvote_the_grammar() -> None:
    turn = "Plans changed: my parents are coming to us for Christmas, so no long drive."
    verdict = decide_owner("Plans", turn, turn, "Ali", "Bo", ["Ali", "Bo"])
    assert (verdict.owner, verdict.check) == ("Ali", "corrected")
    assert person_named("Plans", turn) and not person_named("Plans", turn, within=True)


def test_a_short_name_that_opens_a_sentence_is_still_a_name() -> None:
    assert person_named("Ted", "Ted got a job at the docks.")  # not a verb's -ed form
    assert not person_named("Renting", "Renting is hard.")


def test_a_turn_whose_pronouns_point_one_way_decides_when_nothing_else_does() -> None:
    turn = "I was in Chicago, it was awesome! It's great to experience other cultures."
    verdict = decide_owner("Tim", "Tim loves other cultures.", turn, "John", "Tim",
                           ["John", "Tim"])  # fmt: skip
    assert (verdict.owner, verdict.check) == ("John", "corrected")


@pytest.mark.parametrize(
    ("turn", "owner"),
    [
        # nothing in the turn is the addressee's: the speaker's dogs
        ("Pixie's fitting in great! They love playing and exploring the house.", "Audrey"),
        # "you" or the addressee's name: the rule stays out of it
        ("You should get a dog, they love playing and exploring the house.", "Andrew"),
        ("Andrew loves playing with them and exploring the house!", "Andrew"),
    ],
)
def test_a_turn_that_never_names_the_addressee_says_nothing_of_them(turn: str, owner: str) -> None:
    statement = "Andrew loves playing and exploring the house."
    verdict = decide_owner("Andrew", statement, turn, "Audrey", "Andrew", ["Audrey", "Andrew"])
    assert verdict.owner == owner


@pytest.mark.parametrize(
    "turn", ["Congrats on the new job at the bank!", "How was the new job at the bank?"]
)
def test_wishes_and_questions_speak_of_the_addressee_without_you(turn: str) -> None:
    statement = "Andrew started a new job at the bank."
    verdict = decide_owner("Andrew", statement, turn, "Audrey", "Andrew", ["Audrey", "Andrew"])
    assert verdict.owner == "Andrew"


def test_a_pet_known_from_earlier_turns_is_its_keepers() -> None:
    turn = "We had to rehome Clover, my son turned out to be allergic."
    pets = {"Clover": "Noah"}
    verdict = decide_owner("Clover", "Clover will need a new home.", turn, "Noah", "Zoe",
                           ["Noah", "Zoe"], pets)  # fmt: skip
    assert (verdict.owner, verdict.check) == ("Noah", "corrected")
    # unknown as a pet, the name the turn says stands for a third person
    verdict = decide_owner("Clover", "Clover will need a new home.", turn, "Noah", "Zoe",
                           ["Noah", "Zoe"], {"Rex": "Zoe"})  # fmt: skip
    assert (verdict.owner, verdict.check) == ("Clover", "agreed")
    # a speaker who shares a pet's name is no pet
    verdict = decide_owner("Zoe", "Zoe got a new job.", "Zoe got a new job!", "Noah", "Zoe",
                           ["Noah", "Zoe"], {"Zoe": "Noah"})  # fmt: skip
    assert verdict.owner == "Zoe"
