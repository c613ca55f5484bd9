"""Realistic sentences that carry one value: how a support ticket, an HR note or a log line holds it.
Kinds whose recognizer asks for a context word (NL BSN, DE tax id) are written with one, as people do;
the others sometimes are and sometimes are not."""

from __future__ import annotations

from governance.guardrails.personal_data import PersonalDataKind

_ANY = [
    "Customer wrote in about the refund; their details are {v} and the ticket is still open.",
    "Please update the record to {v} before the next billing run.",
    "- {v}\n- status: pending review\n- owner: support team",
    "Note from the call (Tuesday): {v}. Follow up next week.",
    "{v} was attached to the complaint, see the thread above.",
    'payload = {{"customer": "{v}", "priority": 2}}',
    "Can you check whether {v} matches what we have on file?",
    "| id | value |\n|----|-------|\n| 17 | {v} |",
]

TEMPLATES: dict[PersonalDataKind, list[str]] = {
    PersonalDataKind.EMAIL: [
        *_ANY,
        "Send the invoice to {v} and copy finance.",
        "From: {v}\nSubject: Re: order delayed",
    ],
    PersonalDataKind.PHONE: [
        *_ANY,
        "You can reach me on {v} after 5pm.",
        "Mobile: {v}",
        "Please call the applicant back at {v}.",
    ],
    PersonalDataKind.PAYMENT_CARD: [
        *_ANY,
        "The card on file is {v}, expiry 09/27.",
        "Charge failed for card {v} (insufficient funds).",
    ],
    PersonalDataKind.IBAN: [
        *_ANY,
        "Pay the deposit into IBAN {v} by Friday.",
        "Bank details: {v}, reference INV-2291.",
    ],
    PersonalDataKind.US_SSN: [*_ANY, "Employee SSN: {v}", "The applicant's social security number is {v}."],
    PersonalDataKind.UK_NINO: [
        *_ANY,
        "National Insurance number {v} was entered twice.",
        "NI no. {v}; tax code 1257L.",
    ],
    PersonalDataKind.DE_TAX_ID: [
        "Steuer-ID: {v}",
        "Bitte die steuerliche Identifikationsnummer {v} im Formular eintragen.",
        "Her German tax ID is {v}, please keep it on file.",
        "IdNr {v} (from the payroll export)",
        "tax identification number {v} was rejected by the portal",
    ],
    PersonalDataKind.FR_NIR: [
        *_ANY,
        "Numéro de sécurité sociale : {v}",
        "His NIR is {v}; the carte Vitale is on its way.",
    ],
    PersonalDataKind.IT_FISCAL_CODE: [
        *_ANY,
        "Codice fiscale: {v}",
        "The Italian fiscal code {v} is on the contract.",
    ],
    PersonalDataKind.ES_DNI_NIE: [*_ANY, "DNI/NIE del titular: {v}", "Her NIE is {v}."],
    PersonalDataKind.NL_BSN: [
        "BSN: {v}",
        "Het burgerservicenummer is {v}.",
        "Please verify the citizen's BSN {v} against the register.",
        "sofinummer {v} (old records)",
        "Dutch citizen service number: {v}",
    ],
    PersonalDataKind.IP_ADDRESS: [
        *_ANY,
        "Login from {v} at 03:12 UTC was flagged.",
        "client_ip={v} status=403 path=/account",
    ],
}
