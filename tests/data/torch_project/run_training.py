"""The project's entry point (`python run_training.py`)."""

from classifier.train import main

main()
