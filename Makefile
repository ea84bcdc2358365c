# Two commands for a new user: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TRAIN_STAMP := $(VENV)/.installed-train

.PHONY: demo test model look-model card-mask-model evaluate foreign-eval real-eval bench clean

# The team's real decks (printed faces, photos of physical cards); a user's clone has none, and
# then `make model` trains on renders alone and `make real-eval` says it has nothing to read.
REAL ?= ../shared/real

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml constraints.txt | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $@

$(TRAIN_STAMP): pyproject.toml constraints.txt | $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,train]'
	touch $@

demo: $(STAMP)
	$(PY) -m device.demo

# On every core (pytest-xdist); tests sharing a costly module fixture carry an xdist_group mark.
test: $(STAMP)
	$(PY) -m pytest -q -n auto --dist loadgroup

# Training is not part of `make test`: it needs the train extra (local CPU torch) and ~20 minutes.
# With REAL beside the repo, half the faces drawn are the deck's printed ones (vision.synth.printed).
model: $(TRAIN_STAMP)
	$(PY) -m vision.training.train --deck flip7 $(if $(wildcard $(REAL)/flip7-art),--printed-faces $(REAL)/flip7-art)

# The look network that calibration to the user's deck compares cards with (one for every deck):
# the network of d93e2aa (trained from scratch by `python -m vision.training.train_look --printings 6000
# --generic-share 0.6667 --uno-numerals-share 0.15`, ~2.2 h on two threads), fine-tuned with
# look-alikes dealt together and poor captures (docs/history/calibration.md). It writes the float
# network (models/card-look-float.onnx) and the int8 one the device reads (models/card-look.onnx).
look-model: $(TRAIN_STAMP)
	mkdir -p data && git show d93e2aa:models/card-look.onnx > data/card-look-d93e2aa.onnx
	$(PY) -m vision.training.train_look --init data/card-look-d93e2aa.onnx --printings 4000 --generic-share 0.625 \
	  --uno-numerals-share 0.15 --epochs 3 --lr 5e-4 --poor-share 0.3

# The card mask network a still photo's cards are also found by (vision.card_mask; ~20 min on two
# threads): every deck's scenes, with the printed faces where REAL has them.
card-mask-model: $(TRAIN_STAMP)
	$(PY) -m vision.training.train_card_mask $(if $(wildcard $(REAL)),--printed-faces $(REAL))

# Foreign-deck reading before and after calibration (models/calibration.md), every deck with a model.
foreign-eval: $(STAMP)
	for deck in flip7 flip7-vengeance uno-flip; do \
	  if [ -f models/$$deck.onnx ]; then $(PY) -m vision.evaluation.foreign_eval --deck $$deck || exit 1; fi; done

# The figure of record: held-out captures of the printed faces and the photos of physical cards.
real-eval: $(STAMP)
	@if [ ! -d "$(REAL)" ]; then echo "make real-eval: no real decks at $(REAL) (set REAL=DIR)" >&2; exit 2; fi
	$(PY) -m vision.evaluation.real_eval --deck flip7 --real $(REAL)
	$(PY) -m vision.evaluation.real_eval --deck uno-flip --real $(REAL)

evaluate: $(STAMP)
	$(PY) -m vision.evaluation.evaluate --deck flip7

bench: $(STAMP)
	$(PY) bench/rules_bench.py
	$(PY) bench/vengeance_bench.py
	$(PY) bench/advice_bench.py
	$(PY) bench/vision_bench.py
	$(PY) bench/device_bench.py
	$(PY) bench/hand_read_bench.py

clean:
	rm -rf $(VENV) out build *.egg-info
