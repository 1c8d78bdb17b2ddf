from lamina.stores.lexical import Analyzer


def test_case_punctuation_and_possessives() -> None:
    analyze = Analyzer(stem=False)
    assert analyze("Caroline's DOG, Rex!!! (a Golden-Retriever)") == [
        "caroline",
        "dog",
        "rex",
        "golden",
        "retriever",
    ]
    assert analyze("don't") == ["dont"] or analyze("don't") == []


def test_stemming_folds_inflections() -> None:
    analyze = Analyzer()
    assert analyze("painting paintings painted") == ["paint"] * 3
    assert analyze("adopting adoption") == analyze("adopt adopt")


def test_stop_words_are_dropped() -> None:
    assert Analyzer()("what is the name of it") == ["name"]
    assert Analyzer(stop_words=frozenset())("what is it") == ["what", "is", "it"]


def test_unicode_is_normalised() -> None:
    analyze = Analyzer(stem=False)
    assert analyze("ＣＡＦＥ café") == ["cafe", "café"]
