"""``python make_corpus.py DIR``: a small fixed corpus in wikitext-2's layout (train, valid and
test.txt of a hundred words), for the word language model example offline."""

import os
import random
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = random.Random(0)
words = [f"w{i}" for i in range(100)]
for name, lines in (("train", 400), ("valid", 60), ("test", 60)):
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        for _ in range(lines):
            f.write(" ".join(rng.choice(words) for _ in range(rng.randint(5, 15))) + "\n")
