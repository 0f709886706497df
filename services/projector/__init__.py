"""The projector: folds the events into read models (views, lobby, history)."""
