"""Request bodies are JSON whatever the Content-Type says.

`curl -d '{...}'` sends application/x-www-form-urlencoded; refusing it would fail the most
common first try for no benefit.
"""

from rest_framework.parsers import JSONParser


class AnyContentJSONParser(JSONParser):
    media_type = "*/*"
