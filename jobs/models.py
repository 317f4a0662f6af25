# Judge and generation jobs arrive with issue 4; JudgeRun lives in arena.models.
