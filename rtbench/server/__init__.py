"""`rtbench serve`: the lab's results server (web pages, JSON API, uploads).

Needs the optional extra `rtbench[server]` (FastAPI, uvicorn).
"""
