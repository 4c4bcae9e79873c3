"""``karmada-webhook``: Karmada's validating and mutating admission webhooks over HTTPS.

The rules are :mod:`karmada.validation`; this package only speaks AdmissionReview.
"""
